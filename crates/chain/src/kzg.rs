//! The EIP-4844 point-evaluation precompile without the 4,096-point trusted setup.
//!
//! revm's default crypto provider verifies point-evaluation proofs with c-kzg, whose
//! settings (the whole trusted setup plus its FK20 tables for computing cell proofs) take
//! seconds of one core to build the first time the precompile runs. Verifying a proof
//! needs only `[τ]₂`, one point of that setup: revm ships that verification too, on blst
//! (`revm::precompile::kzg_point_evaluation::blst`), with the same pairing check. Every
//! gigagas process installs it as revm's crypto provider ([`install_kzg_verifier`]), so a
//! run, an import or a suite of dumps starts in milliseconds, and the sequential baseline
//! and the parallel replay run the same verifier. Every other primitive stays revm's
//! default.

use revm::precompile::{Crypto, PrecompileHalt, install_crypto, kzg_point_evaluation};
use std::sync::OnceLock;

/// revm's default crypto, except point evaluation on blst with `[τ]₂` only.
#[derive(Debug)]
struct SetupFreeKzg;

impl Crypto for SetupFreeKzg {
    fn verify_kzg_proof(
        &self,
        z: &[u8; 32],
        y: &[u8; 32],
        commitment: &[u8; 48],
        proof: &[u8; 48],
    ) -> Result<(), PrecompileHalt> {
        if kzg_point_evaluation::blst::verify_kzg_proof(commitment, z, y, proof) {
            Ok(())
        } else {
            Err(PrecompileHalt::BlobVerifyKzgProofFailed)
        }
    }
}

/// Whether [`install_kzg_verifier`] has run in this process, and with what outcome.
static INSTALLED: OnceLock<bool> = OnceLock::new();

/// Install the setup-free point-evaluation verifier as revm's crypto provider, once per
/// process, before any precompile runs. Returns whether it is in place: `false` when
/// something already fixed revm's provider (a precompile ran first), in which case the
/// default c-kzg path stays, and loads its setup on first use.
///
/// This sets process-wide state, so binaries call it at start-up (gigagas's `main`) and
/// tests before they replay; the executor's `Replay::new` only checks it
/// ([`kzg_verifier_installed`]).
pub fn install_kzg_verifier() -> bool {
    *INSTALLED.get_or_init(|| install_crypto(SetupFreeKzg))
}

/// Whether the setup-free verifier is revm's crypto provider: [`install_kzg_verifier`]
/// ran and succeeded. Installs nothing.
pub fn kzg_verifier_installed() -> bool {
    INSTALLED.get().copied().unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy_primitives::hex;

    // revm-precompile's own point-evaluation test vector.
    const COMMITMENT: [u8; 48] = hex!(
        "8f59a8d2a1a625a17f3fea0fe5eb8c896db3764f3185481bc22f91b4aaffcca25f26936857bc3a7c2539ea8ec3a952b7"
    );
    const Z: [u8; 32] = hex!("73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000");
    const Y: [u8; 32] = hex!("1522a4a7f34e1ea350ae07c29c96c7e79655aa926122e95fe69fcbd932ca49e9");
    const PROOF: [u8; 48] = hex!(
        "a62ad71d14c5719385c0686f1871430475bf3a00f0aa3f7b8dd99a9abc2160744faf0070725e00b60ad9a026a15b1a8c"
    );

    /// The precompile's input: versioned hash, z, y, commitment, proof.
    fn input(commitment: &[u8; 48], y: &[u8; 32]) -> Vec<u8> {
        let mut input = kzg_point_evaluation::kzg_to_versioned_hash(commitment).to_vec();
        input.extend_from_slice(&Z);
        input.extend_from_slice(y);
        input.extend_from_slice(commitment);
        input.extend_from_slice(&PROOF);
        input
    }

    /// The installed verifier answers like c-kzg with the full setup: the valid vector
    /// passes, a changed evaluation or a commitment that is not a curve point fails, through
    /// the precompile revm runs (so through the installed provider).
    #[test]
    fn agrees_with_the_full_setup_on_valid_and_invalid_proofs() {
        assert!(
            install_kzg_verifier(),
            "installed before any precompile ran"
        );
        assert!(kzg_verifier_installed());
        let mut wrong_y = Y;
        wrong_y[31] ^= 1;
        let mut not_a_point = COMMITMENT;
        not_a_point[5] ^= 0x40;
        for (commitment, y, valid) in [
            (COMMITMENT, Y, true),
            (COMMITMENT, wrong_y, false),
            (not_a_point, Y, false),
        ] {
            let setup_free = kzg_point_evaluation::run(&input(&commitment, &y), 100_000).is_ok();
            let c_kzg = c_kzg::ethereum_kzg_settings(0)
                .verify_kzg_proof(
                    &c_kzg::Bytes48::new(commitment),
                    &c_kzg::Bytes32::new(Z),
                    &c_kzg::Bytes32::new(y),
                    &c_kzg::Bytes48::new(PROOF),
                )
                .unwrap_or(false);
            assert_eq!(setup_free, valid, "setup-free verifier, valid = {valid}");
            assert_eq!(c_kzg, valid, "c-kzg with the full setup, valid = {valid}");
        }
    }
}
