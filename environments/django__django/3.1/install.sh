python -m pip install -r tests/requirements/py3.txt && python -m pip install -e .
