"""Drop-in replacements for other NUFFT packages, running on fieldft:

    import fieldft.compat.finufft as finufft
    import fieldft.compat.cufinufft as cufinufft

Each module mirrors the public Python API of the 2.5 release of that package (names,
signatures, defaults, axis order, out= behaviour, properties, options, warnings and exception
types). docs/python.md lists the differences that remain.
"""
