"""The names of TF1's input pipeline (:mod:`.queues`, :mod:`.readers`, :mod:`.parsing`,
:mod:`.records`, :mod:`.file_datasets`), gathered here so that the package's ``__init__``
adds them in a few lines: top-level names (``tf.FIFOQueue``, ``tf.TextLineReader``,
``tf.decode_csv`` ...), ``tf.io``, ``tf.python_io``, and what they add to ``tf.train``,
``tf.data`` and ``tf.compat``."""

from __future__ import annotations

from . import file_datasets, parsing, queues, readers, records

TOP_LEVEL = {name: getattr(module, name) for module, names in (
    (queues, ("FIFOQueue", "QueueBase", "RandomShuffleQueue")),
    (readers, ("FixedLengthRecordReader", "ReaderBase", "TFRecordReader", "TextLineReader",
               "WholeFileReader", "matching_files")),
    (parsing, ("FixedLenFeature", "decode_csv", "decode_raw", "parse_single_example",
               "read_file", "string_to_number")),
    (records, ("python_io",)),
) for name in names}

#: tf.io's names of the input pipeline (added to a tf.io that other names may share)
IO_NAMES = dict(
    FixedLenFeature=parsing.FixedLenFeature, decode_csv=parsing.decode_csv,
    decode_raw=parsing.decode_raw, parse_single_example=parsing.parse_single_example,
    read_file=parsing.read_file, TFRecordWriter=records.TFRecordWriter,
    tf_record_iterator=records.tf_record_iterator,
    match_filenames_once=readers.match_filenames_once, matching_files=readers.matching_files)

TRAIN_NAMES = dict(
    records.TRAIN_NAMES, Coordinator=queues.Coordinator, QueueRunner=queues.QueueRunner,
    add_queue_runner=queues.add_queue_runner, start_queue_runners=queues.start_queue_runners,
    string_input_producer=readers.string_input_producer,
    input_producer=readers.input_producer, range_input_producer=readers.range_input_producer,
    slice_input_producer=readers.slice_input_producer,
    match_filenames_once=readers.match_filenames_once, batch=readers.batch,
    shuffle_batch=readers.shuffle_batch)

DATA_NAMES = dict(TextLineDataset=file_datasets.TextLineDataset,
                  TFRecordDataset=file_datasets.TFRecordDataset)
DATA_EXPERIMENTAL = dict(CsvDataset=file_datasets.CsvDataset)
COMPAT_NAMES = dict(as_bytes=records.as_bytes, as_str=records.as_str, as_text=records.as_text)

__all__ = ["COMPAT_NAMES", "DATA_EXPERIMENTAL", "DATA_NAMES", "IO_NAMES", "TOP_LEVEL",
           "TRAIN_NAMES"]
