"""Settings shared by the unit tests and the notebook tests (pytest --nbval).

Notebook kernels inherit this process's environment, so the variables set here reach them too.
"""
import os

# progress bars are for people; tests (and the committed outputs) stay silent and deterministic
os.environ["LMCOURSE_PROGRESS"] = "0"
# nothing may be downloaded at run time
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TRANSFORMERS_OFFLINE"] = "1"
