"""Claims: statements with evidence, stance and two times, built by rules from the precomputes.

``model`` (the claim and evidence types, ``claim_id``), ``policy`` (source authority and the
conflict policy), ``rules`` (pure functions: precompute rows → claims), ``build`` (reads the
database, calls the rules), ``store`` (bitemporal append-only writes, queries and checks),
``resolution`` (alias clusters with same / different / unresolved decisions and the review queue).
No generative model anywhere.
"""
