"""The robustness study on Dask workers that read the stored Study themselves (meta.sample_context):
same values as locally, bit for bit; the planning process never builds the context; clear errors
and a fall-back to sending the context where the file cannot be used."""
import pickle

import numpy as np
import pytest

from recmetrics import parallel, prepared
from recmetrics.errors import InputError
from recmetrics.meta import reduced_sets, sample_context
from recmetrics.meta import robustness as rb
from recmetrics.meta.replicates import unit_labels

distributed = pytest.importorskip("dask.distributed")

GRID = {"ratings": (1.0, 0.5, 0.2), "popular-items": (1.0, 0.9), "random-users": (0.6,)}


@pytest.fixture(scope="module")
def stored(tmp_path_factory):
    """A Study of three systems on two folds, stored and loaded again (what the own-runs chapters read)."""
    from test_recommenders import synthetic

    from recmetrics import study

    folder = tmp_path_factory.mktemp("stored")
    st = study.Study(synthetic(seed=5), ["Random", "Pop", "ItemKNN(k=20)"], ["P", "nDCG", "AP"], [5, 10], k=2, seed=0,
                     cache_dir=folder / "runs", progress=False)
    path = prepared.save_prepared(st, folder / "prepared.npz", "key")
    return path


@pytest.fixture(scope="module")
def cluster():
    """One worker in its own process, as a LocalCluster of the benchmarks: it receives what is pickled."""
    with parallel.local_cluster(1, threads_per_worker=2) as c, distributed.Client(c) as client:
        yield client


def built_here(monkeypatch) -> list:
    """The contexts built in this process (the cluster's worker is another one)."""
    built = []
    real = reduced_sets._Context.__init__

    def init(self, *a, **k):
        built.append(1)
        real(self, *a, **k)

    monkeypatch.setattr(reduced_sets._Context, "__init__", init)
    return built


@pytest.mark.parametrize("with_replicates", [False, True])
def test_workers_that_read_the_stored_study_give_the_local_values(stored, cluster, monkeypatch, with_replicates):
    st = prepared.load_prepared(stored, "key")
    assert st.origin == (str(stored.resolve()), "key")
    labels = unit_labels(st, 3, seed=2) if with_replicates else None
    kw = dict(sizes=GRID, n_samples=4, seed=3, progress=False, replicates=labels)
    local = rb.robustness_studies(st, ["arithmetic", "geometric"], **kw)
    built = built_here(monkeypatch)
    shared = []
    real = rb.shared_context
    monkeypatch.setattr(rb, "shared_context", lambda *a, **k: shared.append(real(*a, **k)) or shared[-1])
    remote = rb.robustness_studies(st, ["arithmetic", "geometric"], client=cluster, **kw)
    assert [type(s).__name__ for s in shared] == ["StoredContext"]
    assert built == []                       # neither the samples' context nor the full sets' scores here
    for a in local:
        assert local[a].samples.equals(remote[a].samples)
        assert local[a].full.equals(remote[a].full)
        if with_replicates:
            assert local[a].replicate_samples.equals(remote[a].replicate_samples)


def test_the_sample_stopping_rule_on_stored_workers_gives_the_local_values(stored, cluster):
    st = prepared.load_prepared(stored, "key")
    kw = dict(sizes={"ratings": (0.5, 0.3)}, n_samples=6, seed=1, progress=False, target_se=1e-9, min_samples=2)
    local = rb.robustness_study(st, **kw)
    remote = rb.robustness_study(st, client=cluster, **kw)
    assert local.samples.equals(remote.samples) and len(local.samples) == 2 * 6 * 6   # sizes, samples, metrics


def test_only_the_full_sets_on_stored_workers(stored, cluster):
    """A grid of size 1 alone: no sample to draw, the full sets' scores still come from a worker."""
    st = prepared.load_prepared(stored, "key")
    local = rb.robustness_study(st, sizes={"ratings": (1.0,)}, progress=False)
    remote = rb.robustness_study(st, sizes={"ratings": (1.0,)}, progress=False, client=cluster)
    assert local.samples.equals(remote.samples) and local.full.equals(remote.full)


def test_a_study_that_came_from_no_file_or_an_unreadable_one_sends_its_context(stored, cluster, tmp_path):
    st = prepared.load_prepared(stored, "key")
    assert isinstance(sample_context.shared_context(st, ["P@5"], client=cluster), sample_context.StoredContext)
    assert isinstance(sample_context.shared_context(st, ["P@5"]), reduced_sets._Context)       # local
    st.origin = (str(tmp_path / "elsewhere.npz"), "key")      # a file the workers cannot see
    assert not parallel.workers_can_read(cluster, st.origin[0])
    assert isinstance(sample_context.shared_context(st, ["P@5"], client=cluster), reduced_sets._Context)
    del st.origin                                             # a Study computed in memory
    assert isinstance(sample_context.shared_context(st, ["P@5"], client=cluster), reduced_sets._Context)
    local = rb.robustness_study(st, sizes={"ratings": (0.5,)}, n_samples=2, progress=False)
    assert local.samples.equals(rb.robustness_study(st, sizes={"ratings": (0.5,)}, n_samples=2, progress=False,
                                                    client=cluster).samples)


def test_a_stored_study_replaced_since_it_was_loaded_fails_clearly(stored, cluster, tmp_path):
    copy = tmp_path / "copy.npz"
    copy.write_bytes(stored.read_bytes())
    st = prepared.load_prepared(copy, "key")
    copy.write_bytes(b"not a stored study")
    with pytest.raises(InputError, match="copy.npz is not the one the study was given"):
        rb.robustness_study(st, sizes={"ratings": (0.5,)}, n_samples=2, progress=False, client=cluster)
    st = prepared.load_prepared(stored, "key")
    ref = sample_context.StoredContext(st.origin, ["Pop", "Random"], ["P@5"])   # systems it does not have
    with pytest.raises(InputError, match="its systems changed"):
        ref.context()


def test_the_stand_in_is_pickled_without_its_context(stored):
    st = prepared.load_prepared(stored, "key")
    labels = unit_labels(st, 2)
    ref = sample_context.StoredContext(st.origin, st.systems, ["P@5", "nDCG@10"], labels)
    ctx = ref.context()
    assert ref.context() is ctx                                # built once
    size = len(pickle.dumps(ref))
    back = pickle.loads(pickle.dumps(ref))
    assert back._ctx is None and back.names == ref.names and np.array_equal(back.replicates, labels)
    assert size < labels.nbytes + 2000 < len(pickle.dumps(ctx))
    assert np.array_equal(back.context().samples("ratings", 0.5, [7], "arithmetic")[0],
                          ctx.samples("ratings", 0.5, [7], "arithmetic")[0], equal_nan=True)
