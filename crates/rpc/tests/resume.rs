//! An interrupted dump continues with `resume` and yields the same file, byte for byte, as
//! an uninterrupted one; a resume directory of another range is refused.

mod common;

use common::{Driver, Kind, Node, setup, workload};
use gigagas_rpc::{DumpEvent, DumpOptions, RpcDumpError, dump_to_file, partial_dir_for};
use std::io::Write;

#[test]
fn interrupted_dump_resumes_to_the_same_file() {
    let Some(node) = Node::start(Kind::Anvil) else {
        return;
    };
    let mut d = Driver::new(&node);
    let mut c = setup(&mut d);
    let from = d.block_number() + 1;
    workload(&mut d, &mut c);
    let to = d.block_number();
    let total = to - from + 1;

    let dir = tempfile::tempdir().unwrap();
    let base = DumpOptions {
        concurrency: std::num::NonZeroUsize::new(2).unwrap(),
        batch_size: 8,
        ..DumpOptions::new(node.url.clone(), from, to)
    };

    // Interrupted after two blocks: no output file, the progress is kept.
    let resumed = dir.path().join("resumed.gigagas");
    let stopped = DumpOptions {
        stop_after: Some(2),
        ..base.clone()
    };
    match dump_to_file(&stopped, &resumed, &mut |_| {}) {
        Err(RpcDumpError::Stopped { done: 2, total: t }) => assert_eq!(t, total),
        other => panic!("expected a stop after 2 blocks, got {other:?}"),
    }
    assert!(!resumed.exists());
    let partial = partial_dir_for(&resumed);
    assert!(partial.join("meta.json").is_file());
    // As if killed in the middle of writing a line of the state log.
    std::fs::OpenOptions::new()
        .append(true)
        .open(partial.join("state.jsonl"))
        .unwrap()
        .write_all(br#"{"k":"s","address":"0x00"#)
        .unwrap();

    // A resume directory of another range is refused, and left alone.
    let other = DumpOptions {
        resume: true,
        to: to - 1,
        ..base.clone()
    };
    let err = dump_to_file(&other, &resumed, &mut |_| {}).unwrap_err();
    assert!(matches!(err, RpcDumpError::Partial { .. }), "{err}");
    assert!(err.to_string().contains("--resume"), "{err}");
    assert!(partial.join("meta.json").is_file());

    // Resume.
    let mut start = None;
    let again = DumpOptions {
        resume: true,
        ..base.clone()
    };
    dump_to_file(&again, &resumed, &mut |p| {
        if let DumpEvent::Start {
            resumed_blocks,
            resumed_state,
            ..
        } = p
        {
            start = Some((resumed_blocks, resumed_state));
        }
    })
    .unwrap_or_else(|e| panic!("resumed dump: {e}"));
    let (resumed_blocks, resumed_state) = start.unwrap();
    assert!(
        resumed_blocks >= 2,
        "blocks fetched before are reused ({resumed_blocks})"
    );
    assert!(resumed_state > 0, "state fetched before is reused");
    assert!(!partial.exists());

    // Uninterrupted.
    let straight = dir.path().join("straight.gigagas");
    dump_to_file(&base, &straight, &mut |_| {}).unwrap();
    let (a, b) = (
        std::fs::read(&resumed).unwrap(),
        std::fs::read(&straight).unwrap(),
    );
    assert!(
        a == b,
        "the resumed dump differs from the uninterrupted one ({} vs {} bytes)",
        a.len(),
        b.len()
    );

    // --resume without a resume directory simply starts from scratch.
    let fresh = dir.path().join("fresh.gigagas");
    dump_to_file(
        &DumpOptions {
            resume: true,
            ..base
        },
        &fresh,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(std::fs::read(&fresh).unwrap(), b);
}
