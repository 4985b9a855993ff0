"""Live progress for long stages (model builds, solves, local search), refreshed by a background ticker.

Why a ticker: solvers call back irregularly (HiGHS logs once at 0.06 s and then may stay silent for a minute
in a long node), so the display cannot depend on callbacks alone. Callbacks only *update* the fields; a daemon
thread redraws them at least every ``period`` seconds with the elapsed time. On a terminal the display is a
tqdm bar (against the time limit when there is one); otherwise, e.g. in a log file or CI, plain lines.
"""
from __future__ import annotations

import math
import sys
import threading
import time


def fmt(v) -> str:
    """The one number formatter for progress, summaries and reports: 6 significant digits, '-' for none."""
    if v is None:
        return "-"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            return "-"
        return f"{v:.6g}"
    return str(v)


def fmt_gap(g) -> str:
    return "-" if g is None or not math.isfinite(g) else f"{100 * g:.3g}%"


class ProgressLine:
    """Fields of one running stage, shown live when ``enabled``.

    ``update(**fields)`` changes what is shown (``None`` removes a field); ``note(text)`` prints one line
    above the display; ``close()`` prints the final state once. Use as a context manager.
    """

    def __init__(self, label: str, enabled: bool = True, period: float = 1.0, time_limit: float | None = None,
                 stream=None):
        self.label = label
        self.enabled = bool(enabled)
        self.period = float(period)
        self.time_limit = time_limit if time_limit is not None and math.isfinite(time_limit) else None
        self.stream = stream if stream is not None else sys.stderr
        self.fields: dict = {}
        self.t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._bar = None
        self._thread = None
        self._last_draw = 0.0
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)()) if self.enabled else False
        # plain lines (logs, CI) every 1.5 s so that one arrives within every 2 s; a terminal bar every `period`
        self._period = self.period if self._tty else max(self.period, 1.5)
        if self.enabled:
            if self._tty:
                try:
                    from tqdm import tqdm
                    self._bar = tqdm(total=self.time_limit, desc=f"[{label}]", file=self.stream, leave=True,
                                     unit="s", dynamic_ncols=True,
                                     bar_format="{desc} {elapsed}{postfix}" if self.time_limit is None
                                     else "{desc} {bar:10} {elapsed}<{remaining}{postfix}")
                except ImportError:   # pragma: no cover - tqdm is a dependency
                    self._tty = False
            self._thread = threading.Thread(target=self._tick, name=f"opttrees-progress-{label}", daemon=True)
            self._thread.start()

    # ------------------------------------------------------------------ updates (any thread)
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def update(self, **fields) -> None:
        with self._lock:
            for k, v in fields.items():
                if v is None:
                    self.fields.pop(k, None)
                else:
                    self.fields[k] = v
        # a solver that holds the GIL (SCIP) starves the ticker thread: callbacks draw when a line is due
        if self.enabled and self.elapsed() - self._last_draw >= self._period:
            self._draw()

    def note(self, text: str) -> None:
        if not self.enabled:
            return
        line = f"[{self.label}] {self.elapsed():7.2f}s {text}"
        if self._bar is not None:
            self._bar.write(line, file=self.stream)
        else:
            print(line, file=self.stream, flush=True)

    def render(self) -> str:
        with self._lock:
            parts = [f"{k}={fmt_gap(v) if k == 'gap' else fmt(v)}" for k, v in self.fields.items()]
        return " ".join(parts)

    # ------------------------------------------------------------------ display
    def _draw(self) -> None:
        self._last_draw = self.elapsed()
        if self._bar is not None:
            el = self.elapsed()
            if self.time_limit is not None:
                self._bar.n = min(el, self.time_limit)
            self._bar.set_postfix_str(self.render(), refresh=False)
            self._bar.refresh()
        else:
            print(f"[{self.label}] {self.elapsed():7.2f}s {self.render()}", file=self.stream, flush=True)

    def _tick(self) -> None:
        while not self._done.wait(0.2):
            if self.elapsed() - self._last_draw < self._period:
                continue
            try:
                self._draw()
            except Exception:   # pragma: no cover - a closed stream must never kill a solve
                return

    def close(self) -> None:
        if self._done.is_set():
            return
        self._done.set()
        if not self.enabled:
            return
        if self._thread is not None:
            self._thread.join(timeout=1.0)
        try:
            self._draw()
            if self._bar is not None:
                self._bar.close()
        except Exception:   # pragma: no cover
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
