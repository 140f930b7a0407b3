python -m pip install .
