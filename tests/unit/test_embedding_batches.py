"""How the ONNX encoder groups texts into batches (agent_memory/core/onnx_bert.py ``length_batches``)."""

from agent_memory.core.onnx_bert import BATCH_LENGTH_SHARE, length_batches


def test_every_text_is_in_exactly_one_batch_longest_first():
    lengths = [5, 250, 30, 31, 7, 250, 128, 29]
    batches = length_batches(lengths, batch_size=64)
    flat = [i for batch in batches for i in batch]
    assert sorted(flat) == list(range(len(lengths)))
    assert [lengths[i] for i in flat] == sorted(lengths, reverse=True)


def test_a_short_text_is_not_padded_to_a_long_one():
    lengths = [256, 20, 19, 240, 18]
    batches = length_batches(lengths, batch_size=64)
    assert batches == [[0, 3], [1, 2, 4]]  # 240 >= 0.9 * 256; 20, 19, 18 together, apart from both
    for batch in batches:
        assert min(lengths[i] for i in batch) >= BATCH_LENGTH_SHARE * lengths[batch[0]]


def test_texts_of_one_length_fill_batches_of_the_given_size():
    batches = length_batches([12] * 150, batch_size=64)
    assert [len(b) for b in batches] == [64, 64, 22]
    assert length_batches([], batch_size=64) == []
