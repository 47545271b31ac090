//! The state-root phase: every block's root from the dump's witness and the
//! access lists, on the pass's workers after the transactions or beside them, equals the
//! header's; a wrong header root or a witness without a needed node fails the pass, never
//! gives a number; a dump without a witness is refused with one line; a root-only witness
//! gives every root.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::Dump;
use gigagas_executor::{
    DivergenceField, Mismatch, Parallel, Replay, RootStepKind, RunConfig, Runner, SchedulerKind,
    Sequential, TimedWork, test_utils::prepare,
};
use gigagas_grid::StateRootPhase;
use gigagas_workload::{GeneratorConfig, Profile, generate, generate_with_witness};
use std::num::NonZeroUsize;

const BLOCKS: u64 = 4;

fn config(profile: Profile) -> GeneratorConfig {
    GeneratorConfig {
        profile,
        blocks: BLOCKS,
        gas_per_block: 2_000_000,
        seed: 38,
        fork: EthereumHardfork::Prague,
        users: 80,
    }
}

fn with_root(threads: usize, batch: usize, phase: StateRootPhase) -> RunConfig {
    RunConfig::new(
        NonZeroUsize::new(threads).unwrap(),
        batch,
        SchedulerKind::GasUsed,
    )
    .with_work(TimedWork {
        state_root: phase,
        ..TimedWork::default()
    })
}

fn run(replay: &Replay, config: &RunConfig) -> Result<gigagas_executor::RunTimings, String> {
    Parallel::new(config)
        .run(replay, true)
        .map_err(|d| d.to_string())
}

#[test]
fn after_and_overlapped_give_every_header_root_at_every_shape() {
    for profile in [Profile::MainnetLike, Profile::Erc20] {
        let dump = generate_with_witness(&config(profile), |_, _| {}).unwrap();
        let replay = prepare(dump).unwrap();
        assert_eq!(
            replay.witness_coverage(),
            (BLOCKS as usize, BLOCKS as usize)
        );
        for phase in [StateRootPhase::After, StateRootPhase::Overlapped] {
            for threads in [1, 2, 3] {
                for batch in [1, 2, BLOCKS as usize] {
                    let config = with_root(threads, batch, phase);
                    let timings = run(&replay, &config)
                        .unwrap_or_else(|e| panic!("{profile:?} {config}: {e}"));
                    let root = &timings.root;
                    assert_eq!(root.blocks, BLOCKS as usize, "{config}");
                    assert!(root.root_ns > 0 && root.root_busy_ns > 0, "{config}");
                    // Every batch ends when the later of execution and its root does.
                    assert!(
                        timings.wall_ns >= root.exec_ns.max(root.root_ns),
                        "{config}"
                    );
                    // Each block's account trie is worked on at least once.
                    for b in 0..BLOCKS as u32 {
                        assert!(
                            root.spans
                                .iter()
                                .any(|s| s.block == b && s.kind == RootStepKind::Accounts),
                            "{config}: block {b} has no account-trie span"
                        );
                    }
                    if phase == StateRootPhase::After {
                        assert_eq!(root.overlap_ns, 0, "{config}: after never overlaps");
                    }
                }
            }
        }
        // The client loop computes the same roots, each after its block.
        let sequential = Sequential::new(TimedWork {
            state_root: StateRootPhase::After,
            ..TimedWork::default()
        })
        .run(&replay, true)
        .unwrap_or_else(|e| panic!("{profile:?} sequential: {e}"));
        assert_eq!(sequential.root.blocks, BLOCKS as usize);
        assert!(sequential.root.root_ns > 0 && sequential.root.exec_ns > 0);
        // Off computes nothing.
        let off = run(&replay, &with_root(2, 1, StateRootPhase::Off)).unwrap();
        assert_eq!(off.root.blocks, 0);
        assert!(off.root.spans.is_empty());
    }
}

#[test]
fn a_wrong_header_root_fails_the_pass_at_that_block() {
    let mut dump = generate_with_witness(&config(Profile::MainnetLike), |_, _| {}).unwrap();
    let block = &mut dump.segments[0].blocks[2];
    let number = block.header.number;
    let right = block.header.state_root;
    block.header.state_root = alloy_primitives::B256::repeat_byte(0x38);
    let replay = prepare(dump).unwrap();
    for phase in [StateRootPhase::After, StateRootPhase::Overlapped] {
        for threads in [1, 2] {
            let config = with_root(threads, BLOCKS as usize, phase);
            let failed = Parallel::new(&config).run(&replay, true).unwrap_err();
            let divergence = failed.divergence().expect("the pass ran and diverged");
            assert_eq!(divergence.block, number, "{config}");
            assert_eq!(divergence.field(), DivergenceField::StateRoot);
            match &*divergence.mismatch {
                Mismatch::StateRoot(values) => assert_eq!(values.got, right),
                other => panic!("{config}: {other}"),
            }
        }
    }
    // The client loop with its roots fails at the same block.
    let failed = Sequential::new(TimedWork {
        state_root: StateRootPhase::After,
        ..TimedWork::default()
    })
    .run(&replay, true)
    .unwrap_err();
    let divergence = failed.divergence().expect("the loop ran and diverged");
    assert_eq!(
        (divergence.block, divergence.field()),
        (number, DivergenceField::StateRoot)
    );
    // With the root off, the same passes verify.
    run(&replay, &with_root(2, 1, StateRootPhase::Off)).unwrap();
    Sequential::new(TimedWork::default())
        .run(&replay, true)
        .unwrap();
}

#[test]
fn a_dump_without_a_witness_is_refused_in_one_line() {
    let dump = generate(&config(Profile::Transfers), |_, _| {}).unwrap();
    let replay = prepare(dump).unwrap();
    assert_eq!(replay.witness_coverage(), (0, BLOCKS as usize));
    let err = run(&replay, &with_root(2, 1, StateRootPhase::After)).unwrap_err();
    assert!(
        err.contains("state-root phase") && err.contains("no segment of the dump has one"),
        "{err}"
    );
    assert!(!err.contains('\n'), "{err}");
    let err = Sequential::new(TimedWork {
        state_root: StateRootPhase::After,
        ..TimedWork::default()
    })
    .run(&replay, true)
    .unwrap_err()
    .to_string();
    assert!(err.contains("no segment of the dump has one"), "{err}");
}

/// Without any one witness node, a pass either still gives every header's root (the node
/// was not needed) or fails with "root not computable"; never another root.
#[test]
fn a_witness_without_a_node_never_gives_a_wrong_root() {
    let full: Dump = generate_with_witness(&config(Profile::Erc20), |_, _| {}).unwrap();
    let nodes = full.segments[0].witness.as_ref().unwrap().nodes.len();
    let (mut passed, mut refused) = (0, 0);
    // Every 7th node, to keep the test short; the nodes are sorted, so the sample spans
    // the tries.
    for drop in (0..nodes).step_by(7) {
        let mut dump = full.clone();
        dump.segments[0]
            .witness
            .as_mut()
            .unwrap()
            .nodes
            .remove(drop);
        let replay = prepare(dump).unwrap();
        match Parallel::new(&with_root(2, 2, StateRootPhase::Overlapped)).run(&replay, true) {
            Ok(_) => passed += 1,
            Err(e) => {
                // Refused before the window (the trie does not open), or inside it.
                if let Some(d) = e.divergence() {
                    assert_eq!(d.field(), DivergenceField::StateRoot, "{d}");
                    assert!(
                        !matches!(&*d.mismatch, Mismatch::StateRoot(_)),
                        "node {drop} removed gave a wrong root: {d}"
                    );
                }
                assert!(e.to_string().contains("root not computable"), "{e}");
                refused += 1;
            }
        }
    }
    assert!(refused > 0, "some node must be needed ({passed} passed)");
}

/// A root-only witness (only the nodes the roots need, the trie walked only where
/// a block changes a value): after and overlapped, the replay and the client loop give
/// every header's root from it.
#[test]
fn a_root_only_witness_gives_every_header_root() {
    for profile in [Profile::MainnetLike, Profile::Erc20] {
        let mut dump = generate_with_witness(&config(profile), |_, _| {}).unwrap();
        let figures = gigagas_trie::root_only_dump(&mut dump).unwrap();
        assert!(
            figures.nodes_after < figures.nodes_before,
            "{profile:?}: {figures}"
        );
        let replay = prepare(dump).unwrap();
        for phase in [StateRootPhase::After, StateRootPhase::Overlapped] {
            for (threads, batch) in [(1, 1), (2, 1), (2, BLOCKS as usize)] {
                let config = with_root(threads, batch, phase);
                let timings =
                    run(&replay, &config).unwrap_or_else(|e| panic!("{profile:?} {config}: {e}"));
                assert_eq!(timings.root.blocks, BLOCKS as usize, "{config}");
            }
        }
        Sequential::new(TimedWork {
            state_root: StateRootPhase::After,
            ..TimedWork::default()
        })
        .run(&replay, true)
        .unwrap_or_else(|e| panic!("{profile:?} sequential: {e}"));
    }
}
