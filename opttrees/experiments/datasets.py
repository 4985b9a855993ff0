"""Former name of :mod:`opttrees.datasets`, kept so that old imports work: it is the very same module object."""
import sys

from .. import datasets as _module

sys.modules[__name__] = _module
