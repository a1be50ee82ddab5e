import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture
def tiny():
    """Two systems, two judges, four items, both presentation orders for judge j1."""
    return pd.DataFrame(
        {
            "item": [1, 1, 2, 2, 3, 4, 1, 2],
            "a": ["x", "y", "x", "y", "y", "x", "x", "x"],
            "b": ["y", "x", "y", "x", "x", "y", "y", "y"],
            "judge": ["j1", "j1", "j1", "j1", "j1", "j1", "j2", "j2"],
            "winner": ["a", "b", "a", "a", "b", "b", "a", "b"],
        }
    )
