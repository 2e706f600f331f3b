"""Architecture diagrams for the book, drawn as code with matplotlib.

Every diagram speaks one visual language (:mod:`lmcourse.diagrams._drawing`): one colour for each
kind of part, the same fonts, tensor shapes on the edges. Each part of the book keeps its diagrams
in one module, and each diagram is a public function there, decorated with ``@diagram``, that
returns a new :class:`~matplotlib.figure.Figure` (not shown, not saved). This package exports every
diagram under its own name (``diagrams.transfer()``), and :data:`DIAGRAMS` maps each name to its
function; adding a diagram takes one decorated function in one part module and nothing else.

Shapes use the course's names: batch ``B``, time ``T`` (``S`` for a source sequence), ``d_model``,
``h`` heads with ``d_k = d_model / h``, ``d_ff``, vocabulary size ``V``.
"""
from collections.abc import Callable

from matplotlib.figure import Figure

from lmcourse.diagrams import (
    attention_mechanisms,
    foundations,
    language_models,
    pretrained_models,
    recurrent,
    transformer_architectures,
    word_embeddings,
)
from lmcourse.diagrams._drawing import REGISTERED

#: the modules holding the diagrams, one for each part of the book, in the book's order
_PARTS = (foundations, language_models, word_embeddings, recurrent, attention_mechanisms, transformer_architectures,
          pretrained_models)

#: every diagram by short name, in the book's order, so that a test (or a chapter) can draw them all
DIAGRAMS: dict[str, Callable[[], Figure]] = {
    function.__name__: function for part in _PARTS for function in REGISTERED
    if function.__module__ == part.__name__}

globals().update(DIAGRAMS)
__all__ = ["DIAGRAMS", *DIAGRAMS]
