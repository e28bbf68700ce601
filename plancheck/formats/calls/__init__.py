"""The built-in call shapes, one module each, every one ending in ``SHAPE = CallShape(...)``:
the registry (:mod:`plancheck.formats.shapes`) finds them here, so a new shape is one module
(``docs/adding-a-call-shape.md``)."""
