python -m pip install -e .
