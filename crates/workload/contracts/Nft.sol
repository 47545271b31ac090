// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Nft
/// @notice Storage-heavy ERC-721-like collection. Every minted id writes five fresh
///         storage slots (owner + three words of metadata, plus the shared counters
///         amortised per batch) and emits an ERC-721 style Transfer log.
/// @dev Not a full ERC-721 (no approvals / safeTransfer / ERC-165): only the storage
///      shape matters for the benchmark. Ids start at 1 and are sequential; the
///      `totalSupply` counter is shared by all minters (as in real collections).
contract Nft {
    struct TokenData {
        uint256 birth; // (block.number << 128) | id  -- never zero
        bytes32 dna; // keccak256(minter, id)
        uint256 level; // 1 + dna % 1000         -- never zero
    }

    uint256 public totalSupply;
    mapping(uint256 => address) public ownerOf;
    mapping(address => uint256) public balanceOf;
    mapping(uint256 => TokenData) public tokenData;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);

    /// @notice Mints `count` fresh ids to msg.sender. Returns the first id minted
    ///         (ids are firstId .. firstId + count - 1).
    function mint(uint256 count) external returns (uint256 firstId) {
        uint256 id = totalSupply;
        firstId = id + 1;
        for (uint256 i = 0; i < count; ++i) {
            ++id;
            bytes32 dna;
            assembly ("memory-safe") {
                mstore(0x00, caller())
                mstore(0x20, id)
                dna := keccak256(0x00, 0x40)
            }
            ownerOf[id] = msg.sender;
            tokenData[id] = TokenData({birth: (block.number << 128) | id, dna: dna, level: 1 + (uint256(dna) % 1000)});
            emit Transfer(address(0), msg.sender, id);
        }
        balanceOf[msg.sender] += count;
        totalSupply = id;
    }

    function transfer(address to, uint256 id) external {
        require(ownerOf[id] == msg.sender, "Nft: not owner");
        require(to != address(0), "Nft: zero address");
        ownerOf[id] = to;
        unchecked {
            balanceOf[msg.sender] -= 1; // >= 1 because msg.sender owns `id`
            balanceOf[to] += 1; // bounded by totalSupply
        }
        emit Transfer(msg.sender, to, id);
    }
}
