"""split_sentences gives the same result from many threads at once (pysbd state is per thread)."""

from concurrent.futures import ThreadPoolExecutor

from radar_pipeline.sentences import split_sentences

TEXTS = [
    f"Passage {i}. The Sr. Gómez met Dra. Ruiz on {i} May. Drones were seen near Tumaco. End {i}." for i in range(300)
]


def test_thread_safe():
    serial = [split_sentences(t, "es") for t in TEXTS]
    with ThreadPoolExecutor(16) as pool:
        parallel = list(pool.map(lambda t: split_sentences(t, "es"), TEXTS))
    assert parallel == serial
