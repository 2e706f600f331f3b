"""lmcourse: the small PyTorch library behind the book "From n-grams to BERT".

Every chapter of the book imports from here; nothing here imports a chapter.
"""
from lmcourse.seed import DEFAULT_DEVICE, set_seed

__version__ = "0.1.0"
__all__ = ["DEFAULT_DEVICE", "set_seed", "__version__"]
