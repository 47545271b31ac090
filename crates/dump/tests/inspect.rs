//! `inspect_dump` streams a dump's blocks instead of decoding them all: its summary is
//! the one of the decoded dump, for every shipped dump.

use gigagas_dump::{inspect_dump, read_dump};
use std::path::Path;

#[test]
fn the_streamed_summary_is_the_decoded_dumps() {
    let dumps = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps");
    let mut files = vec![
        dumps.join("mainnet.gigagas"),
        dumps.join("mainnet-like.gigagas"),
        dumps.join("adversarial.gigagas"),
    ];
    let mut compute: Vec<_> = std::fs::read_dir(dumps.join("benchmark-compute"))
        .expect("the shipped benchmark dumps")
        .map(|e| e.unwrap().path())
        .collect();
    compute.sort();
    files.extend(compute.into_iter().step_by(40));
    for path in files {
        let (dump, info) = read_dump(&path).expect("a shipped dump loads");
        let (summary, streamed_info) = inspect_dump(&path).expect("a shipped dump summarises");
        assert_eq!(summary, dump.summary(), "{}", path.display());
        assert_eq!(streamed_info, info, "{}", path.display());
        assert!(summary.transactions > 0 && summary.blocks > 0);
    }
}
