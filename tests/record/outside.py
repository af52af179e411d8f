"""outside.py - the programs written as outside users write them
(tests/record/programs/out_*.py) and what each one's real run decides: its
exit (1 where what it keeps grows with its progress), the holders as the
program spells them (each in the verdict as "held by the program at H"),
and, for a program that forks, what the recorder must say of its children.
Read by test_record.py (under 1.13.1) and tests/torch2/check_outside.py
(under 2.6 and 2.14): the same decisions under every PyTorch, the counts
each real run's own (truth.py)."""

CHILD = "a child process was forked; its fake-tensor events are not recorded"
OUTSIDE = {
    "out_loop_generator_feed": (1, ["HISTORY["], None),
    "out_loop_calls_from_places": (1, ["LOG["], None),
    "out_frames_closures": (1, ["CALLBACKS[0].__closure__[0].cell_contents -> tensor#"], None),
    "out_frames_retry_errors": (1, ["FAILURES[0][1].__traceback__.tb_next.tb_next.tb_frame."
                                    "f_locals['probe']"], None),
    "out_holders_moduledict": (1, ["model.heads['cls'].seen[", "model.blocks[1].last_fake"],
                               None),
    "out_holders_dataclass": (1, ["STATES[0].inputs[0]", "STATES[0].output"], None),
    "out_threads_pool": (1, ["RESULTS["], None),
    "out_threads_mode_each": (0, ["PUBLISHED['w"], None),
    "out_mp_fork_child_leak": (0, ["PARENT_KEEP[0]"], CHILD),
    "out_mp_pool_fork": (0, [], CHILD),
    "out_clean_bounded_cache": (0, ["CACHE[(2, "], None),
    "out_clean_weak_values": (0, [], None),
    "out_clean_del_each_round": (0, [], None),
    "out_threads_submit_history": (1, ["HISTORY["], None),
    "out_threads_two_pools": (1, ["TRAIN_LOG["], None),
    "out_async_responses": (1, ["RESPONSES[0]['meta'] -> tensor#"], None),
    "out_async_gather_log": (1, ["SESSION_LOG[0][1] -> tensor#"], None),
    "out_loader_collate_cache": (0, ["collate.by_shape[(4, 6)] -> tensor#"], None),
    "out_lru_cache_method": (1, ["ShapeProp.example cache[(<ShapeProp object>, (1, 16))] "
                                 "-> tensor#"], None),
}
