// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Precompiles
/// @notice Drives precompiled contracts with known-valid inputs. Every call result is
///         checked (a wrong answer reverts), so a client that mis-implements a
///         precompile cannot "win" the benchmark.
/// @dev State is kept per caller (mappings keyed by msg.sender) so transactions from
///      different senders do not conflict. Functions whose precompile output is
///      constant (ecrecover, pairing, point evaluation) store a per-caller call
///      counter; sha256 and modexp chain their output into per-caller state. Either
///      way any call with n > 0 writes a new storage value.
///      Precompile calls are made from inline assembly using fixed memory so that
///      memory does not grow with n.
contract Precompiles {
    // ---- ecrecover (0x01) fixed vector ----------------------------------------
    // Signature of ECR_HASH by the secp256k1 key keccak256("gigagas ecrecover key"),
    // where ECR_HASH = keccak256("gigagas ecrecover message"). Generated with
    // @noble/curves (RFC 6979 deterministic k) and cross-checked by executing the
    // precompile; see README.md.
    uint256 internal constant ECR_HASH = 0x84115e4129ec1be407aedec044375a8c3e2e297747c8fb4fb84f313575ea9ffd;
    uint256 internal constant ECR_V = 28;
    uint256 internal constant ECR_R = 0x44c4dfa496a04ced7b4106bfb829b89c95226e0476b1108739d734b43f077791;
    uint256 internal constant ECR_S = 0x25bf7cbc7f10e5bfe15b3e7ca978c11690a0d3367a5255218c50b3d5e290f8bf;
    uint256 internal constant ECR_SIGNER = 0x00b6bec8ba990f9d95bd981f2c910a4d7e0b33476d; // address 0xB6BeC8ba990f9D95BD981f2c910A4d7e0b33476D

    // ---- bn254 pairing (0x08) vector: e(G1, G2) * e(-G1, G2) == 1 --------------
    uint256 internal constant G1_X = 1;
    uint256 internal constant G1_Y = 2;
    // -G1 = (1, q - 2) with q the bn254 base-field modulus.
    uint256 internal constant NEG_G1_Y = 0x30644e72e131a029b85045b68181585d97816a916871ca8d3c208c16d87cfd45;
    // G2 generator, EIP-197 encoding: x = (x_im, x_re), y = (y_im, y_re).
    uint256 internal constant G2_X_IM = 0x198e9393920d483a7260bfb731fb5d25f1aa493335a9e71297e485b7aef312c2;
    uint256 internal constant G2_X_RE = 0x1800deef121f1e76426a00665e5c4479674322d4f75edadd46debd5cd992f6ed;
    uint256 internal constant G2_Y_IM = 0x090689d0585ff075ec9e99ad690c3395bc4b313370b38ef355acdadcd122975b;
    uint256 internal constant G2_Y_RE = 0x12c85ea5db8c6deb4aab71808dcb408fe3d1e7690c43d37b4ce6cc0166fa7daa;

    // ---- modexp (0x05): base^(2^256 - 1) mod p_secp256k1, 32-byte operands -----
    uint256 internal constant MODEXP_EXP = 0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff;
    uint256 internal constant MODEXP_MOD = 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f;

    mapping(address => uint256) public ecrecoverCount;
    mapping(address => bytes32) public sha256State;
    mapping(address => uint256) public pairingCount;
    mapping(address => uint256) public modexpState;
    mapping(address => uint256) public pointEvaluationCount;

    error PrecompileFailed(uint256 precompile);

    /// @notice Calls ecrecover (0x01) `n` times on the fixed vector; each result must
    ///         equal the expected signer. Adds n to ecrecoverCount[msg.sender].
    function ecrecoverLoop(uint256 n) external returns (address signer) {
        bool failed;
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, ECR_HASH)
            mstore(add(p, 0x20), ECR_V)
            mstore(add(p, 0x40), ECR_R)
            mstore(add(p, 0x60), ECR_S)
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                mstore(0x00, 0)
                let ok := staticcall(gas(), 0x01, p, 0x80, 0x00, 0x20)
                signer := mload(0x00)
                if iszero(and(ok, eq(signer, ECR_SIGNER))) {
                    failed := 1
                    break
                }
            }
        }
        if (failed) revert PrecompileFailed(0x01);
        ecrecoverCount[msg.sender] += n;
    }

    /// @notice state = sha256(state) `n` times via precompile 0x02, starting from
    ///         sha256State[msg.sender]; stores the final state.
    function sha256Loop(uint256 n) external returns (bytes32 h) {
        h = sha256State[msg.sender];
        bool failed;
        assembly ("memory-safe") {
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                mstore(0x00, h)
                if iszero(staticcall(gas(), 0x02, 0x00, 0x20, 0x00, 0x20)) {
                    failed := 1
                    break
                }
                h := mload(0x00)
            }
        }
        if (failed) revert PrecompileFailed(0x02);
        sha256State[msg.sender] = h;
    }

    /// @notice Calls the bn254 pairing check (0x08) `n` times with the 2-pair input
    ///         (G1, G2), (-G1, G2); each call must return 1. Adds n to
    ///         pairingCount[msg.sender].
    function pairing(uint256 n) external {
        bool failed;
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, G1_X)
            mstore(add(p, 0x20), G1_Y)
            mstore(add(p, 0x40), G2_X_IM)
            mstore(add(p, 0x60), G2_X_RE)
            mstore(add(p, 0x80), G2_Y_IM)
            mstore(add(p, 0xa0), G2_Y_RE)
            mstore(add(p, 0xc0), G1_X)
            mstore(add(p, 0xe0), NEG_G1_Y)
            mstore(add(p, 0x100), G2_X_IM)
            mstore(add(p, 0x120), G2_X_RE)
            mstore(add(p, 0x140), G2_Y_IM)
            mstore(add(p, 0x160), G2_Y_RE)
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                mstore(0x00, 0)
                let ok := staticcall(gas(), 0x08, p, 0x180, 0x00, 0x20)
                if iszero(and(ok, eq(mload(0x00), 1))) {
                    failed := 1
                    break
                }
            }
        }
        if (failed) revert PrecompileFailed(0x08);
        pairingCount[msg.sender] += n;
    }

    /// @notice state = state^(2^256-1) mod p_secp256k1 `n` times via modexp (0x05)
    ///         with 32-byte base/exponent/modulus, starting from modexpState[msg.sender]
    ///         (2 if unset); stores the final state.
    function modexpCall(uint256 n) external returns (uint256 r) {
        r = modexpState[msg.sender];
        if (r == 0) r = 2;
        bool failed;
        assembly ("memory-safe") {
            let p := mload(0x40)
            mstore(p, 0x20) // base length
            mstore(add(p, 0x20), 0x20) // exponent length
            mstore(add(p, 0x40), 0x20) // modulus length
            mstore(add(p, 0x60), r) // base (overwritten in place by each result)
            mstore(add(p, 0x80), MODEXP_EXP)
            mstore(add(p, 0xa0), MODEXP_MOD)
            for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                if iszero(staticcall(gas(), 0x05, p, 0xc0, add(p, 0x60), 0x20)) {
                    failed := 1
                    break
                }
            }
            r := mload(add(p, 0x60))
        }
        if (failed) revert PrecompileFailed(0x05);
        modexpState[msg.sender] = r;
    }

    /// @notice Forwards a 192-byte input (versioned_hash | z | y | commitment | proof)
    ///         to the KZG point evaluation precompile (0x0a) and requires success
    ///         (and the 64-byte return value). Increments pointEvaluationCount[msg.sender].
    function pointEvaluation(bytes calldata input) external {
        require(input.length == 192, "Precompiles: input must be 192 bytes");
        bool failed;
        assembly ("memory-safe") {
            let p := mload(0x40)
            calldatacopy(p, input.offset, 192)
            let ok := staticcall(gas(), 0x0a, p, 192, 0x00, 0x40)
            if iszero(and(ok, eq(returndatasize(), 0x40))) {
                failed := 1
            }
        }
        if (failed) revert PrecompileFailed(0x0a);
        pointEvaluationCount[msg.sender] += 1;
    }
}
