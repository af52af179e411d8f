"""A small suite for the fakegc pytest plugin: the tests named *_leaks leave
fake tensors behind (accumulating in a module-level list, or held where the
mark fails on reachable, or made through a module- or session-scoped
fixture's mode and kept); the *_clean ones do not (what the fixtures
themselves keep is theirs, never a test's). check.py runs it with --fakegc
and requires exactly the leaking ones to fail."""
import fakegc
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

CACHE = []
FIXTURE_CACHE = []
OUTS = []


@pytest.fixture(scope="module")
def shared_mode():
    # module-scoped: made before the first test that uses it, kept across
    # tests; what it holds is not charged to any test
    m = FakeTensorMode()
    m.KEEP = [m.from_tensor(torch.randn(3)) for _ in range(4)]
    return m


def test_convert_and_drop_clean():
    m = FakeTensorMode()
    for i in range(5):
        f = m.from_tensor(torch.randn(2, i + 1))
        assert f.shape == (2, i + 1)


def test_ops_under_mode_clean():
    m = FakeTensorMode()
    a, b = m.from_tensor(torch.randn(4, 4)), m.from_tensor(torch.randn(4, 2))
    with m:
        y = a @ b
    assert y.shape == (4, 2)


def test_appends_to_module_list_leaks():
    m = FakeTensorMode()
    fakegc.mark("filling CACHE")
    for i in range(6):
        CACHE.append(m.from_tensor(torch.randn(i + 1)))


@pytest.fixture(scope="session")
def session_mode():
    # session-scoped, with fakes of its own kept across the session
    m = FakeTensorMode()
    m.KEEP = [m.from_tensor(torch.randn(2)) for _ in range(3)]
    return m


def test_uses_module_fixture_clean(shared_mode):
    f = shared_mode.from_tensor(torch.randn(2, 2))
    assert f.shape == (2, 2)


def test_ops_under_session_fixture_clean(session_mode):
    a = session_mode.from_tensor(torch.randn(3, 3))
    with session_mode:
        y = a @ a
    assert y.shape == (3, 3)


def test_keeps_fakes_of_module_fixture_mode_leaks(shared_mode):
    for i in range(5):
        FIXTURE_CACHE.append(shared_mode.from_tensor(torch.randn(i + 2)))


def test_keeps_op_outputs_of_session_fixture_mode_leaks(session_mode):
    a = session_mode.from_tensor(torch.randn(4))
    with session_mode:
        for i in range(4):
            OUTS.append(a * (i + 1))


@pytest.mark.fakegc(fail_on="lost,accumulating,reachable")
def test_keeps_one_in_a_global_leaks():
    global KEPT
    m = FakeTensorMode()
    KEPT = m.from_tensor(torch.randn(5))


def test_keeps_one_in_a_global_passes_by_default():
    global KEPT2
    m = FakeTensorMode()
    KEPT2 = m.from_tensor(torch.randn(5))
