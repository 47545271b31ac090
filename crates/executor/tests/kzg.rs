//! `Replay::new` installs no process-wide state, and never leaves a timed pass to load
//! c-kzg's trusted setup: a dump that calls the point-evaluation precompile is refused
//! until the caller has installed the setup-free verifier. Its own test binary (one
//! process, one test), so that nothing installs the verifier before it looks.

use alloy_hardforks::EthereumHardfork;
use gigagas_dump::Dump;
use gigagas_executor::{
    PrepareError, Replay,
    replay::calls_point_evaluation,
    test_utils::{install_kzg_verifier, kzg_verifier_installed},
};
use gigagas_workload::{GeneratorConfig, Profile};
use std::path::Path;

fn calls(dump: &Dump) -> bool {
    let spec = gigagas_executor::ChainSpec::from_config(&dump.meta.chain).unwrap();
    calls_point_evaluation(dump, &spec)
}

/// Generation records its blocks, and recording installs the verifier: only after the
/// refusal has been seen.
fn small(profile: Profile) -> Dump {
    gigagas_workload::generate(
        &GeneratorConfig {
            profile,
            blocks: 4,
            gas_per_block: 4_000_000,
            seed: 7,
            fork: EthereumHardfork::Prague,
            users: 40,
        },
        |_, _| {},
    )
    .expect("generation succeeds")
}

#[test]
fn a_dump_that_calls_point_evaluation_is_refused_until_the_kzg_verifier_is_installed() {
    assert!(
        !kzg_verifier_installed(),
        "nothing in this process has installed the verifier yet"
    );
    // The embedded default dump (read from its file: no recording) calls the precompile
    // (the synthetic workload's precompile-user contract): its access lists name 0x0a.
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dumps/mainnet-like.gigagas");
    let (dump, _) = gigagas_dump::read_dump(&path).expect("the embedded default dump loads");
    assert!(calls(&dump));
    let err = Replay::new(dump.clone()).expect_err("refused without the verifier");
    assert!(
        matches!(err, PrepareError::KzgVerifierNotInstalled),
        "{err}"
    );
    assert!(err.to_string().contains("install_kzg_verifier"), "{err}");

    // The same dump with 0x0a taken out of its access lists does not call it: it prepares
    // without the verifier, and preparing installs nothing.
    let mut without = dump.clone();
    let address = alloy_primitives::Address::with_last_byte(0x0a);
    for block in without.blocks_mut() {
        block.access_list.retain(|a| a.address != address);
    }
    assert!(!calls(&without));
    Replay::new(without).expect("a dump that never calls point evaluation prepares");
    assert!(!kzg_verifier_installed(), "Replay::new installed nothing");

    // Installed (as gigagas's main does at start-up), the dump prepares.
    assert!(install_kzg_verifier());
    assert!(kzg_verifier_installed());
    Replay::new(dump).expect("prepares once the verifier is installed");

    // Transfer and token workloads never call it.
    assert!(!calls(&small(Profile::Transfers)));
    assert!(!calls(&small(Profile::Erc20)));
}
