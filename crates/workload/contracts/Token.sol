// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title Token
/// @notice Minimal but complete ERC-20 used by the gigagas workload generator.
/// @dev No constructor arguments. `mint` is deliberately permissionless: this
///      contract only exists to generate realistic ERC-20 state traffic in a
///      benchmark (balance/allowance SLOAD/SSTORE + Transfer/Approval logs).
contract Token {
    string public constant name = "Gigagas Token";
    string public constant symbol = "GGT";
    uint8 public constant decimals = 18;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    /// @notice Creates `amount` new tokens for `to`. Callable by anyone.
    function mint(address to, uint256 amount) external {
        totalSupply += amount;
        // Cannot overflow: every balance is <= totalSupply, which was checked above.
        unchecked {
            balanceOf[to] += amount;
        }
        emit Transfer(address(0), to, amount);
    }

    function transfer(address to, uint256 amount) external returns (bool) {
        _transfer(msg.sender, to, amount);
        return true;
    }

    function approve(address spender, uint256 amount) external returns (bool) {
        allowance[msg.sender][spender] = amount;
        emit Approval(msg.sender, spender, amount);
        return true;
    }

    /// @dev An allowance of type(uint256).max is treated as infinite and never decreased.
    function transferFrom(address from, address to, uint256 amount) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= amount, "ERC20: insufficient allowance");
            unchecked {
                allowance[from][msg.sender] = allowed - amount;
            }
        }
        _transfer(from, to, amount);
        return true;
    }

    function _transfer(address from, address to, uint256 amount) internal {
        uint256 fromBalance = balanceOf[from];
        require(fromBalance >= amount, "ERC20: insufficient balance");
        unchecked {
            balanceOf[from] = fromBalance - amount;
            // Cannot overflow: sum of all balances == totalSupply.
            balanceOf[to] += amount;
        }
        emit Transfer(from, to, amount);
    }
}
