// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Compute
/// @notice Compute-heavy workloads. State is kept per caller (mapping keyed by
///         msg.sender), so transactions from different senders never touch the same
///         slot: the cost is dominated by hashing / memory, not by contention.
///         Each call continues from the caller's previous result, so any call with a
///         non-zero argument writes a new value to storage.
contract Compute {
    /// @notice Last keccakLoop result per caller (the chained 32-byte state).
    mapping(address => bytes32) public keccakState;
    /// @notice Last memoryHeavy result per caller.
    mapping(address => bytes32) public memoryState;
    /// @notice Last arithLoop result per caller.
    mapping(address => uint256) public arithState;
    /// @notice Number of slots each caller has written with storeLoop.
    mapping(address => uint256) public storeCount;
    /// @notice Slots written by storeLoop: caller => index => value.
    mapping(address => mapping(uint256 => uint256)) public stored;

    /// @notice state = keccak256(state) `rounds` times, starting from the caller's
    ///         stored state; stores the final state. Memory use is constant (scratch space).
    function keccakLoop(uint256 rounds) external returns (bytes32 h) {
        h = keccakState[msg.sender];
        assembly ("memory-safe") {
            for { let i := 0 } lt(i, rounds) { i := add(i, 1) } {
                mstore(0x00, h)
                h := keccak256(0x00, 0x20)
            }
        }
        keccakState[msg.sender] = h;
    }

    /// @notice Expands memory by `words` 32-byte words, fills word i with (seed + i)
    ///         where seed is the caller's previous result, hashes the whole buffer with
    ///         one keccak256 and stores the hash. Memory expansion cost is quadratic in
    ///         `words` (EVM rule); `words` is capped at 2^24 (512 MiB) to avoid overflow.
    function memoryHeavy(uint256 words) external returns (bytes32 h) {
        require(words <= 1 << 24, "Compute: too many words");
        bytes32 seed = memoryState[msg.sender];
        assembly ("memory-safe") {
            let buf := mload(0x40)
            let len := shl(5, words)
            for { let i := 0 } lt(i, words) { i := add(i, 1) } {
                mstore(add(buf, shl(5, i)), add(seed, i))
            }
            h := keccak256(buf, len)
            mstore(0x40, add(buf, len))
        }
        memoryState[msg.sender] = h;
    }

    /// @notice Integer arithmetic loop (mulmod / addmod / xor / shifts), `rounds`
    ///         iterations from the caller's previous result; stores the result. The
    ///         kind of work of pricing engines and on-chain math libraries.
    function arithLoop(uint256 rounds) external returns (uint256 x) {
        x = arithState[msg.sender] | 1;
        assembly ("memory-safe") {
            let m := 0xfffffffffffffffffffffffffffffffffffffffffffffffffffffffefffffc2f
            for { let i := 0 } lt(i, rounds) { i := add(i, 1) } {
                x := mulmod(x, add(x, i), m)
                x := addmod(x, shl(7, i), m)
                x := xor(x, shr(3, x))
            }
        }
        arithState[msg.sender] = x;
    }

    /// @notice Writes `slots` fresh storage slots (never written before) for the caller:
    ///         the storage-bound heavy transactions of batch operations and airdrops.
    function storeLoop(uint256 slots) external {
        uint256 first = storeCount[msg.sender];
        mapping(uint256 => uint256) storage mine = stored[msg.sender];
        for (uint256 i = 0; i < slots; ++i) {
            mine[first + i] = first + i + 1;
        }
        storeCount[msg.sender] = first + slots;
    }
}
