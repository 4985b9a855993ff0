"""Comparison grids: a YAML file crossing datasets x models (x parameter grids) x solvers x depths x seeds.

Why cells are plain spec dicts: any cell of a grid can be rerun alone with ``opttrees solve``, and the grid adds
no second way of describing a run. A grid file looks like::

    name: oct-variants                 # optional; names the default store and report
    datasets:                          # each entry is a spec ``data`` section
      - {dataset: iris, test_size: 0.25}
      - {csv: data/wine_subset.csv, target: target}       # relative to the grid file
    models:                            # each entry is a spec ``model`` section; ``grid`` crosses parameter values
      - {type: oct, warm_start: greedy, grid: {alpha: [0.0, 0.01]}}
      - {type: cart, uses_solver: false}                  # drop the solver axis for a model that solves nothing
    solvers:                           # each entry is a spec ``solver`` section
      - {name: highs, time_limit: 30}
      - {name: scip, time_limit: 30}
    assist: [none, dp]                 # optional: the DP's start and bound as an axis (see ASSISTS)
    depths: [1, 2]                     # model.max_depth (a model entry's own max_depth wins)
    seeds: [0, 1]                      # data.split_seed when the data has test_size; the solver seed if the model has one
    limits: {wall_time: 120, memory_mb: 4000}   # enforced from outside by the runner, per cell

Each model entry is one configuration, labelled by its type and every parameter that differs from the type's
defaults (``oct[alpha=0.01,routing=aggregated]``), or by its own ``label:``; two entries with the same label are an
error naming both, so a table row never averages two configurations.

``assist`` (grid-wide, or per model entry) says what the dynamic program gives a MIO model: ``none`` (no start, no
bound: the formulation alone), ``greedy`` (a greedy/CART start, no bound), ``dp`` (the DP's tree as start and its
optimum as bound) or ``auto`` (the estimator's defaults). It maps onto ``warm_start`` / ``dp_bound`` and applies to
models that have both and use a solver; a model entry that sets either itself cannot take the axis.

A solver setting a model does not have (``name`` for a local-search regressor, ``seed`` for a MIO) is dropped for
that model, and cells that come out identical are run once. Every cell is validated by ``parse_spec`` when the
grid is loaded, so a typo fails before anything runs, with the cell's position in the message.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import itertools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import InputError, SpecError

GRID_KEYS = {"name", "description", "datasets", "models", "solvers", "depths", "seeds", "limits", "store", "assist"}
LIMIT_KEYS = {"wall_time", "memory_mb"}
#: keys of a grid's model entry that belong to the grid, not to the spec's model section
MODEL_GRID_KEYS = {"grid", "uses_solver", "label", "assist"}
#: the ``assist`` axis: what the dynamic program gives a MIO model, as the estimator parameters that say it
ASSISTS: dict[str, dict[str, Any]] = {"none": {"warm_start": None, "dp_bound": False},
           "greedy": {"warm_start": "greedy", "dp_bound": False},
           "dp": {"warm_start": "dp", "dp_bound": True},
           "auto": {"warm_start": "auto", "dp_bound": "auto"}}
#: model parameters that are axes of their own (columns of the table), never part of a configuration's label
AXIS_PARAMS = {"type", "max_depth", "random_state"}
SEED_KEYS = ("seed", "random_state")


class GridError(InputError):
    """A grid file is malformed; the message names the key or the cell."""


def package_version() -> str:
    try:
        from importlib.metadata import version
        return version("opttrees")
    except Exception:   # pragma: no cover - running from a source tree that is not installed
        return "unknown"


def cell_key(spec: dict, version: str | None = None) -> str:
    """Stable id of a cell: a hash of its spec (without the output folder) and the package version.

    Why the version: results of an older opttrees are not silently reused after the code changed.
    """
    body = {k: v for k, v in spec.items() if k != "output"}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    text += "|" + (version if version is not None else package_version())
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Cell:
    """One run of a grid: an ordinary spec dict plus the labels the report groups by."""

    key: str
    spec: dict
    meta: dict = field(default_factory=dict)


@dataclass
class Grid:
    name: str
    cells: list[Cell]
    limits: dict
    source: Path | None = None
    store: str | None = None
    description: str = ""

    def __len__(self) -> int:
        return len(self.cells)


def _as_list(where: str, value, kind=None) -> list:
    if value is None:
        return []
    if not isinstance(value, list):
        value = [value]
    if kind is not None:
        for i, v in enumerate(value):
            if not isinstance(v, kind) or isinstance(v, bool) and kind is not bool:
                names = " or ".join(t.__name__ for t in (kind if isinstance(kind, tuple) else (kind,)))
                raise GridError(f"{where}[{i}]: expected {names}, got {type(v).__name__} {v!r}")
    return value


def _has_seed(model_type: str) -> bool:
    """Whether spec model ``model_type`` takes ``model.random_state``."""
    from ..registry import models
    entry = models().get(model_type)
    return entry is not None and "random_state" in entry.defaults()


@functools.lru_cache(maxsize=None)
def _accepts_solver_key(model_type: str, key: str) -> bool:
    """Whether spec model ``model_type`` has a setting for ``solver.<key>`` (asked of parse_spec itself)."""
    from ..spec import parse_spec
    probe = {"name": "highs", "time_limit": 1.0, "mip_gap": 0.0, "threads": 1, "seed": 0, "random_state": 0,
             "verbose": False}.get(key, 0)
    try:
        parse_spec({"data": {"dataset": "iris"}, "model": {"type": model_type}, "solver": {key: probe}})
    except SpecError as exc:
        return not str(exc).startswith(f"solver.{key}")
    except Exception:   # the model needs more settings (e.g. a decision problem): only the solver key matters
        return True
    return True


def _format_value(v) -> str:
    if isinstance(v, bool) or v is None:
        return json.dumps(v)   # true / false / null, as written in YAML
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e15 else str(v)
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, separators=(",", ":"))
    return str(v)


def _defaults(model_type: str) -> dict:
    from ..registry import models
    entry = models().get(model_type)
    return entry.defaults() if entry is not None else {}


@functools.lru_cache(maxsize=None)
def _spec_takes_assist(model_type: str) -> bool:
    """Whether a spec of ``model_type`` accepts ``warm_start`` and ``dp_bound`` (asked of parse_spec itself)."""
    from ..spec import parse_spec
    d = _defaults(model_type)
    if "warm_start" not in d or "dp_bound" not in d:
        return False
    try:
        parse_spec({"data": {"dataset": "iris"}, "model": {"type": model_type, **ASSISTS["none"]}})
    except SpecError as exc:     # every problem of the spec is listed: any line about these two keys refuses
        return not any(line.strip().startswith(("model.warm_start", "model.dp_bound"))
                       for line in str(exc).splitlines())
    except Exception:   # the model needs more settings (e.g. a decision problem): only these keys matter
        return True
    return True


def _takes_assist(model_type: str, uses_solver: bool) -> bool:
    """Whether the ``assist`` axis applies: a model that uses a solver and takes ``warm_start`` and ``dp_bound``."""
    return uses_solver and _spec_takes_assist(model_type)


def _own_assist(model: dict) -> str:
    """The assist a model's own warm_start / dp_bound amount to ("custom" when no named one)."""
    d = _defaults(str(model["type"]))
    have = {k: model.get(k, d.get(k)) for k in ("warm_start", "dp_bound")}
    return next((name for name, v in ASSISTS.items() if all(_same(have[k], v[k]) for k in v)), "custom")


def _assists(where: str, value) -> list[str]:
    values = _as_list(where, value, str)
    for i, v in enumerate(values):
        if v not in ASSISTS:
            raise GridError(f"{where}[{i}]: unknown assist {v!r}; one of {sorted(ASSISTS)}")
    if len(set(values)) != len(values):
        raise GridError(f"{where}: a value is listed twice: {values}")
    return values


def _config_label(model: dict, crossed: dict, assisted: set) -> str:
    """``type[p=v,...]`` over every parameter that differs from the type's defaults (crossed ones always)."""
    mtype = str(model["type"])
    defaults = _defaults(mtype)
    shown = [k for k, v in model.items() if k not in AXIS_PARAMS and k not in assisted
             and (k in crossed or k not in defaults or not _same(v, defaults[k]))]
    text = ",".join(f"{k}={_format_value(model[k])}" for k in shown)
    return mtype + (f"[{text}]" if text else "")


def _same(a, b) -> bool:
    """``a`` is the default ``b`` (1 and 1.0 alike; True is not 1)."""
    number = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    if number(a) and number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _dataset_label(data: dict) -> str:
    if "dataset" in data:
        name = data["dataset"]
        if data.get("params"):
            name += "(" + ",".join(f"{k}={_format_value(v)}" for k, v in sorted(data["params"].items())) + ")"
        return name
    return Path(data["csv"]).stem


def _model_variants(i: int, entry: dict, assist: list[str] | None = None
                    ) -> list[tuple[dict, dict, str, bool, str | None]]:
    """(model section, crossed parameters, label, uses_solver, assist) for each combination of one entry."""
    where = f"models[{i}]"
    if not isinstance(entry, dict):
        raise GridError(f"{where}: expected a mapping with at least 'type', got {type(entry).__name__}")
    if "type" not in entry:
        raise GridError(f"{where}.type: missing (a spec model type, see `opttrees models`)")
    base = {k: v for k, v in entry.items() if k not in MODEL_GRID_KEYS}
    crossed = entry.get("grid") or {}
    if not isinstance(crossed, dict):
        raise GridError(f"{where}.grid: expected a mapping of parameter -> list of values")
    uses_solver = entry.get("uses_solver", True)
    if not isinstance(uses_solver, bool):
        raise GridError(f"{where}.uses_solver: expected true or false, got {uses_solver!r}")
    label = entry.get("label")
    if label is not None and not isinstance(label, str):
        raise GridError(f"{where}.label: expected a string, got {type(label).__name__}")
    names = list(crossed)
    values = [_as_list(f"{where}.grid.{n}", crossed[n]) for n in names]
    for n, vs in zip(names, values):
        if not vs:
            raise GridError(f"{where}.grid.{n}: empty list of values")
        if n in ("type", "max_depth"):
            raise GridError(f"{where}.grid.{n}: cross {'depths with the top-level depths' if n == 'max_depth' else 'models'}"
                            " with separate entries, not a parameter grid")
    if "assist" in entry:
        assist = _assists(f"{where}.assist", entry["assist"])
        if not assist:
            raise GridError(f"{where}.assist: empty list of values")
    takes = _takes_assist(str(entry["type"]), uses_solver)
    if "assist" in entry and not takes:
        raise GridError(f"{where}.assist: model type {entry['type']!r} takes no DP start or bound "
                        "(it has no warm_start and dp_bound, or uses no solver)")
    own = sorted(k for k in ("warm_start", "dp_bound") if k in base or k in crossed)
    if own and "assist" in entry:
        raise GridError(f"{where}.{own[0]}: the entry's assist sets warm_start and dp_bound; set one or the other")
    if own:   # the entry's own settings win over the grid's axis, as its own max_depth wins over `depths`
        assist = None
    modes: list[str | None] = list(assist) if assist and takes else [None]
    out = []
    for combo in itertools.product(*values):
        params = dict(zip(names, combo))
        model = {**copy.deepcopy(base), **params}
        name = (f"{label}[{','.join(f'{k}={_format_value(v)}' for k, v in params.items())}]"
                if label is not None and params else label)
        for mode in modes:
            m = {**model, **(ASSISTS[mode] if mode is not None else {})}
            text = name if name is not None else _config_label(m, params, set(ASSISTS["none"]) if mode else set())
            out.append((m, params, text, uses_solver, mode))
    return out


def _check_labels(variants: list) -> None:
    """Two model entries never share a label (a row would average two configurations)."""
    seen: dict[tuple, tuple[int, dict]] = {}
    for mi, (model, _params, label, _uses, mode) in variants:
        first = seen.setdefault((label, mode), (mi, model))
        if first[0] != mi:
            raise GridError(f"models[{first[0]}] and models[{mi}]: both labelled {label!r} (a label names every "
                            "parameter that differs from the type's defaults); give one an explicit `label:` or "
                            "remove the duplicate")


def expand(raw: dict, source: Path | None = None, version: str | None = None) -> Grid:
    """Validate a grid mapping and expand it into cells (each checked by ``parse_spec``)."""
    from ..spec import parse_spec

    if not isinstance(raw, dict):
        raise GridError("grid: the file must contain a mapping with datasets, models and optionally solvers, depths, "
                        "seeds, limits")
    unknown = sorted(set(raw) - GRID_KEYS)
    if unknown:
        raise GridError(f"grid.{unknown[0]}: unknown key; allowed: {sorted(GRID_KEYS)}")
    name = raw.get("name") or (source.stem if source is not None else "grid")
    if not isinstance(name, str):
        raise GridError(f"grid.name: expected a string, got {type(name).__name__}")
    datasets = _as_list("datasets", raw.get("datasets"), dict)
    models = _as_list("models", raw.get("models"))
    if not datasets:
        raise GridError("grid.datasets: missing or empty (a list of spec data sections, e.g. {dataset: iris})")
    if not models:
        raise GridError("grid.models: missing or empty (a list of spec model sections, e.g. {type: oct})")
    solvers = _as_list("solvers", raw.get("solvers"), dict) or [{}]
    depths = _as_list("depths", raw.get("depths"), int) or [None]
    seeds = _as_list("seeds", raw.get("seeds"), int) or [None]
    for i, d in enumerate(depths):
        if d is not None and d < 0:
            raise GridError(f"grid.depths[{i}]: must be >= 0; got {d}")
    for i, s in enumerate(seeds):
        if s is not None and s < 0:
            raise GridError(f"grid.seeds[{i}]: must be >= 0; got {s}")
    limits = dict(raw.get("limits") or {})
    for k, v in limits.items():
        if k not in LIMIT_KEYS:
            raise GridError(f"grid.limits.{k}: unknown key; allowed: {sorted(LIMIT_KEYS)}")
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or not math.isfinite(v)):
            raise GridError(f"grid.limits.{k}: must be a positive number; got {v!r}")
    assist = _assists("grid.assist", raw.get("assist")) if raw.get("assist") is not None else []
    store = raw.get("store")
    if store is not None and not isinstance(store, str):
        raise GridError(f"grid.store: expected a file path string, got {type(store).__name__}")
    if store is not None and source is not None and not Path(store).is_absolute():
        store = str(source.parent / store)

    # csv paths are relative to the grid file, as in a spec file, but a cell must stand alone: make them absolute
    resolved = []
    for i, d in enumerate(datasets):
        d = copy.deepcopy(d)
        if "csv" in d and isinstance(d["csv"], str) and not Path(d["csv"]).is_absolute():
            d["csv"] = str(((source.parent if source is not None else Path.cwd()) / d["csv"]).resolve())
        resolved.append((i, d))
    variants = [(i, v) for i, m in enumerate(models) for v in _model_variants(i, m, assist)]
    _check_labels(variants)

    cells: dict[str, Cell] = {}
    for (di, data), (mi, (model, params, method, uses_solver, mode)), (si, solver), depth, seed in itertools.product(
            resolved, variants, enumerate(solvers), depths, seeds):
        where = f"cell (datasets[{di}], models[{mi}], solvers[{si}], depth={depth}, seed={seed})"
        data_c = copy.deepcopy(data)
        model_c = copy.deepcopy(model)
        solver_c = {k: v for k, v in solver.items()
                    if _accepts_solver_key(str(model_c["type"]), k) and (uses_solver or k in ("time_limit", *SEED_KEYS))}
        if depth is not None and "max_depth" not in model:
            model_c["max_depth"] = depth
        if seed is not None:
            if "test_size" in data_c:
                data_c["split_seed"] = seed
            if "random_state" not in model and _has_seed(str(model_c["type"])):
                model_c["random_state"] = seed   # the spec's one place for the seed (model.random_state)
        spec = {"data": data_c, "model": model_c}
        if solver_c:
            spec["solver"] = solver_c
        try:
            parse_spec(copy.deepcopy(spec), source)
        except SpecError as exc:
            raise GridError(f"{where}: {exc}") from None
        key = cell_key(spec, version)
        if key in cells:
            continue   # the same run reached by another path (e.g. a seed the model ignores)
        spec["output"] = f"results/{name}/cells/{key}"   # the runner puts it beside the store
        mtype = str(model_c["type"])
        solver_name = solver_c.get("name") if uses_solver else None
        shown = method + (f"/{solver_name}" if solver_name else "") + (f" +{mode}" if mode not in (None, "none") else "")
        meta = {"dataset": _dataset_label(data_c), "model": mtype, "params": params, "method": method,
                "solver": solver_name, "assist": mode or (_own_assist(model_c) if _takes_assist(mtype, uses_solver)
                                                          else None),
                "method_solver": shown, "depth": model_c.get("max_depth"), "seed": seed}
        cells[key] = Cell(key, spec, meta)
    return Grid(name, list(cells.values()), limits, source, store, str(raw.get("description") or ""))


def load_grid(path: str | Path, version: str | None = None) -> Grid:
    """Read a grid YAML/JSON file and expand it into cells."""
    from ..spec import read_document
    return expand(read_document(path, "grid", GridError), Path(path).resolve(), version)


def cell_spec_yaml(cell: Cell) -> str:
    """The cell as a spec file, for ``opttrees solve``."""
    return yaml.safe_dump(cell.spec, sort_keys=False)


def as_cells(cells: Any) -> list[Cell]:
    """Accept a Grid, a list of Cells, or a list of spec dicts (keyed here)."""
    if isinstance(cells, Grid):
        return list(cells.cells)
    out = []
    for c in cells:
        if isinstance(c, Cell):
            out.append(c)
        elif isinstance(c, dict):
            spec = copy.deepcopy(c)
            model = spec.get("model", {})
            meta = {"dataset": _dataset_label(spec.get("data", {})) if spec.get("data") else None,
                    "model": model.get("type"), "params": {}, "method": model.get("type"),
                    "solver": (spec.get("solver") or {}).get("name"), "depth": model.get("max_depth"), "seed": None}
            meta["method_solver"] = str(meta["method"]) + (f"/{meta['solver']}" if meta["solver"] else "")
            out.append(Cell(cell_key(spec), spec, meta))
        else:
            raise GridError(f"cells: expected Cell or spec dict, got {type(c).__name__}")
    return out
