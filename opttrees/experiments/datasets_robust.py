"""Former name of :mod:`opttrees.datasets.robust`, kept so that old imports work: it is the very same module object."""
import sys

from ..datasets import robust as _module

sys.modules[__name__] = _module
