import threading

from tests.conftest import create_request


def test_two_threads_creating_matching_jobs_reuse_the_pool_once(backend):
    backend.client().create_training_job(**create_request("seed"))
    backend.clock.advance(900)
    for attempt in range(20):
        clients = [backend.client(), backend.client()]
        barrier = threading.Barrier(2)
        names = [f"race-{attempt}-{i}" for i in range(2)]

        def create(client, name):
            barrier.wait()  # noqa: B023  (each thread is joined within this iteration)
            client.create_training_job(**create_request(name))

        threads = [threading.Thread(target=create, args=pair) for pair in zip(clients, names)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = [clients[0].describe_training_job(TrainingJobName=n).get("WarmPoolStatus") for n in names]
        assert statuses.count({"Status": "InUse"}) == 1, statuses
        assert statuses.count(None) == 1
        backend.clock.advance(900)  # both finish; two pools are Available again
        backend.client().update_training_job(
            TrainingJobName=names[statuses.index(None)], ResourceConfig={"KeepAlivePeriodInSeconds": 0}
        )
