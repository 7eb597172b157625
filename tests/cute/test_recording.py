"""cutekit.cute.recording: the calls a piece of code makes to cutekit.cute, as written, and nothing after."""
from cutekit import cute
from cutekit.cute.recording import recording

SOURCE = '''
row_major = cute.make_layout((4, 8), stride=(8, 1))
offset = row_major((1, 2))
tv = cute.make_layout(((2, 2), (2, 3)), stride=((2, 12), (1, 4)))
share = cute.composition(cute.make_identity_tensor((4, 6)), tv)[(1, None)]
cells = [share[v] for v in range(2)]
tiler, add_tv = cute.make_layout_tv(cute.make_ordered_layout((4, 32), order=(1, 0)), cute.make_layout((4, 4)))
try:
    cute.make_layout((4, 8), order=(1, 0))
except TypeError:
    pass
'''


def test_each_call_the_code_writes_is_logged_with_its_printed_result_and_line():
    code = compile(SOURCE, "<cell>", "exec")
    with recording(lambda frame: frame.f_code.co_filename == "<cell>") as calls:
        exec(code, {"cute": cute})
    logged = [(c.name, c.printed, c.where[1]) for c in calls]
    assert logged[:4] == [("make_layout", "(4,8):(8,1)", 2), (".__call__", "10", 3),
                          ("make_layout", "((2,2),(2,3)):((2,12),(1,4))", 4), ("make_identity_tensor",
                                                                               "tensor<(0,0) o (4,6):(1@0,1@1)>", 5)]
    assert ("composition", "tensor<(0,0) o ((2,2),(2,3)):((2@0,3@1),(1@0,1@1))>", 5) in logged
    assert (".__getitem__", "tensor<(2,0) o ((2,3)):((1@0,1@1))>", 5) in logged
    assert [(n, p) for n, p, line in logged if line == 6] == [(".__getitem__", "(2, 0)"), (".__getitem__", "(3, 0)")]
    assert ("make_layout_tv", "((16, 128), ((32,4),(4,4)):((64,4),(1,16)))", 7) in logged
    refused = calls[-1]
    assert refused.name == "make_layout" and refused.error.startswith("TypeError") and refused.kwargs == {"order": (1, 0)}
    # what make_layout_tv does inside (make_layout, composition, ...) is not logged: only what the code wrote
    assert len([c for c in calls if c.where[1] == 7]) == 3


def test_everything_is_as_it_was_after_the_block():
    before = (cute.make_layout, cute.Layout.__call__, cute.Tensor.__getitem__)
    with recording() as calls:
        cute.make_layout(4)
    assert len(calls) == 1
    assert (cute.make_layout, cute.Layout.__call__, cute.Tensor.__getitem__) == before
    cute.make_layout(4)
    assert len(calls) == 1
