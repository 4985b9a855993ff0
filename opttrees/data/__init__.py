"""The data objects every method reads, one module each, at the bottom of the package (they import nothing but
:mod:`opttrees.errors`, NumPy, pandas and scikit-learn's transformer base):

- :mod:`~opttrees.data.prepared`: input validation shared by every method and :class:`PreparedData`
  (:func:`prepare`: validated X, label codes, scaling, weights, the rank scale of each feature);
- :mod:`~opttrees.data.table`: :class:`TableEncoding`, the encoding of a raw table's columns (categories one-hot,
  dates as days, missing values), stored on a fitted tree as ``Tree.encoding`` and saved in its JSON;
- :mod:`~opttrees.data.binarizers`: the binarisers, scikit-learn transformers that turn numeric features into
  0/1 split columns (:class:`Binarizer`), integer grids (:class:`IntegerEncoder`, whose ``mode`` is
  ``RobustTreeClassifier(encoding=...)``) and one-hot groups (:class:`OneHotGroups`);
- :mod:`~opttrees.data.binarized`: the binarised data the flow family takes (:class:`BinarizedData`,
  :class:`ThermometerData`: the 0/1 matrix plus the split <-> column maps);
- :mod:`~opttrees.data.prescriptive`: :class:`PrescriptiveData` (features, treatment, outcome;
  :func:`prepare_prescriptive`);
- :mod:`~opttrees.data.costs`: SPO cost data (:func:`check_costs_fit`, :func:`prepare_costs`).

One meaning per name: "encoding" is the table's (``TableEncoding``, ``Tree.encoding``); a transformer that turns
features into split columns is a binariser. The names below load on first use, so importing one module of the
package (the tree imports :mod:`~opttrees.data.table`) does not import scikit-learn.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import lazy_names

#: public name -> the module of this package that defines it
_LAZY = {
    **dict.fromkeys(("PreparedData", "prepare"), ".prepared"),
    "TableEncoding": ".table",
    **dict.fromkeys(("Binarizer", "IntegerEncoder", "OneHotGroups"), ".binarizers"),
    **dict.fromkeys(("BinarizedData", "ThermometerData"), ".binarized"),
    **dict.fromkeys(("PrescriptiveData", "prepare_prescriptive"), ".prescriptive"),
    **dict.fromkeys(("check_costs_fit", "prepare_costs"), ".costs"),
}
__all__ = sorted(_LAZY)

__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals(), __all__)

if TYPE_CHECKING:   # static analysers and IDEs see the real names
    from .binarized import BinarizedData, ThermometerData
    from .binarizers import Binarizer, IntegerEncoder, OneHotGroups
    from .costs import check_costs_fit, prepare_costs
    from .prepared import PreparedData, prepare
    from .prescriptive import PrescriptiveData, prepare_prescriptive
    from .table import TableEncoding
