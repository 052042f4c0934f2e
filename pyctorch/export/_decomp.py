def default_decompositions():
    return {}
def retrace(ep, table):
    raise NotImplementedError
