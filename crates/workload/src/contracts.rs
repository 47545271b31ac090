//! The Solidity contracts the generator deploys (sources and build script in `contracts/`).

use alloy_primitives::{Bytes, hex};

alloy_sol_types::sol! {
    /// Minimal ERC-20 with a permissionless `mint`.
    interface IToken {
        function mint(address to, uint256 amount) external;
        function transfer(address to, uint256 amount) external returns (bool);
        function approve(address spender, uint256 amount) external returns (bool);
    }
    /// Constant-product AMM pair.
    interface IPair {
        function addLiquidity(uint256 a0, uint256 a1) external;
        function swap(uint256 amountIn, bool zeroForOne, uint256 minOut) external returns (uint256);
    }
    /// Storage-heavy NFT collection.
    interface INft {
        function mint(uint256 count) external returns (uint256);
    }
    /// Compute-heavy loops.
    interface ICompute {
        function keccakLoop(uint256 rounds) external returns (bytes32);
        function memoryHeavy(uint256 words) external returns (bytes32);
        function arithLoop(uint256 rounds) external returns (uint256);
        function storeLoop(uint256 slots) external;
    }
    /// Precompile users.
    interface IPrecompiles {
        function ecrecoverLoop(uint256 n) external returns (address);
        function sha256Loop(uint256 n) external returns (bytes32);
        function pairing(uint256 n) external;
        function modexpCall(uint256 n) external returns (uint256);
        function pointEvaluation(bytes input) external;
    }
}

fn creation(hex_text: &str) -> Bytes {
    hex::decode(hex_text.trim())
        .expect("committed contract bytecode is valid hex")
        .into()
}

/// Creation bytecode of `Token`.
pub fn token_creation() -> Bytes {
    creation(include_str!("../contracts/out/Token.bin"))
}
/// Creation bytecode of `Pair` (append the two ABI-encoded token addresses).
pub fn pair_creation() -> Bytes {
    creation(include_str!("../contracts/out/Pair.bin"))
}
/// Creation bytecode of `Nft`.
pub fn nft_creation() -> Bytes {
    creation(include_str!("../contracts/out/Nft.bin"))
}
/// Creation bytecode of `Compute`.
pub fn compute_creation() -> Bytes {
    creation(include_str!("../contracts/out/Compute.bin"))
}
/// Creation bytecode of `Precompiles`.
pub fn precompiles_creation() -> Bytes {
    creation(include_str!("../contracts/out/Precompiles.bin"))
}

/// A valid EIP-4844 point-evaluation input (versioned hash | z | y | commitment | proof),
/// from the c-kzg-4844 test vector `verify_kzg_proof_case_correct_proof_31ebd010e6098750`.
pub fn point_evaluation_input() -> Bytes {
    creation(
        "01e798154708fe7789429634053cbf9f99b619f9f084048927333fce637f549b\
         73eda753299d7d483339d80809a1d80553bda402fffe5bfeffffffff00000000\
         1522a4a7f34e1ea350ae07c29c96c7e79655aa926122e95fe69fcbd932ca49e9\
         8f59a8d2a1a625a17f3fea0fe5eb8c896db3764f3185481bc22f91b4aaffcca25f26936857bc3a7c2539ea8ec3a952b7\
         a62ad71d14c5719385c0686f1871430475bf3a00f0aa3f7b8dd99a9abc2160744faf0070725e00b60ad9a026a15b1a8c",
    )
}
