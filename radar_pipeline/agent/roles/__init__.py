"""The run's roles, each reading the question through ``agent.reading``: ``router`` (the offline
orchestrator: route, formulations, requirements), ``analyst`` (retrieval), ``selection`` and
``writer`` (the answer's sentences), ``verifier``, ``visualizer`` (the dashboard view), ``followup``
(a turn merged with the previous one's view), ``premise`` (a question's premise, checked against
passages), ``claims_answer`` and ``figures``. The runner sequences them; none imports the runner.
"""
