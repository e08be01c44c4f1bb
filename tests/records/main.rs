//! Record batches: every magic and codec, hostile batches, and streaming reads. CI also runs
//! this binary with codecs compiled out (`--no-default-features --features records,gzip,json`),
//! where a batch naming a missing codec must be a typed error.

mod batches;
mod records_stream;
