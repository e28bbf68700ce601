"""The rules, a module each; :mod:`plancheck.checks.registry` lists them."""
