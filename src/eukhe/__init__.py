"""eukhe: a coding agent harness whose liveness is law.

Every run ends and every wait has an exit. The rules are pure models in
`eukhe.rules`; their laws, in `eukhe.laws`, are checked by `eukhe laws`.
"""

__version__ = "0.2.0"  # 0.2: the store holds JSON, never pickle (store/codec.py)
