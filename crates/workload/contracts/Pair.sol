// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @dev The subset of ERC-20 the pair needs (implemented by Token.sol).
interface IToken {
    function transfer(address to, uint256 amount) external returns (bool);
    function transferFrom(address from, address to, uint256 amount) external returns (bool);
}

/// @title Pair
/// @notice Simplified Uniswap-V2-style constant-product AMM over two Token contracts.
/// @dev Token movements are real external CALLs into the Token contracts
///      (transferFrom to pull, transfer to push). No LP shares are issued: liquidity
///      added is simply locked in the pair. Reserves live in two storage slots and are
///      a deliberate hot spot (every swap reads and writes both).
contract Pair {
    address public immutable token0;
    address public immutable token1;

    uint256 public reserve0;
    uint256 public reserve1;

    event LiquidityAdded(address indexed provider, uint256 amount0, uint256 amount1);
    event Swap(address indexed sender, bool zeroForOne, uint256 amountIn, uint256 amountOut);

    constructor(address t0, address t1) {
        require(t0 != t1, "Pair: identical tokens");
        token0 = t0;
        token1 = t1;
    }

    function getReserves() external view returns (uint256, uint256) {
        return (reserve0, reserve1);
    }

    /// @notice Output amount `swap` would produce right now (0.3% fee).
    function getAmountOut(uint256 amountIn, bool zeroForOne) public view returns (uint256) {
        (uint256 rIn, uint256 rOut) = zeroForOne ? (reserve0, reserve1) : (reserve1, reserve0);
        return _amountOut(amountIn, rIn, rOut);
    }

    /// @notice Pulls `a0` of token0 and `a1` of token1 from msg.sender (needs prior approve)
    ///         and adds them to the reserves.
    function addLiquidity(uint256 a0, uint256 a1) external {
        _safeTransferFrom(token0, msg.sender, a0);
        _safeTransferFrom(token1, msg.sender, a1);
        reserve0 += a0;
        reserve1 += a1;
        emit LiquidityAdded(msg.sender, a0, a1);
    }

    /// @notice Swaps `amountIn` of token0 for token1 (`zeroForOne`) or the reverse.
    ///         Pulls the input with transferFrom (needs prior approve), sends the output
    ///         to msg.sender. Reverts if the output is below `minOut`.
    function swap(uint256 amountIn, bool zeroForOne, uint256 minOut) external returns (uint256 amountOut) {
        require(amountIn > 0, "Pair: zero input");
        uint256 r0 = reserve0;
        uint256 r1 = reserve1;
        if (zeroForOne) {
            amountOut = _amountOut(amountIn, r0, r1);
            require(amountOut >= minOut, "Pair: insufficient output");
            _safeTransferFrom(token0, msg.sender, amountIn);
            _safeTransfer(token1, msg.sender, amountOut);
            reserve0 = r0 + amountIn;
            reserve1 = r1 - amountOut;
        } else {
            amountOut = _amountOut(amountIn, r1, r0);
            require(amountOut >= minOut, "Pair: insufficient output");
            _safeTransferFrom(token1, msg.sender, amountIn);
            _safeTransfer(token0, msg.sender, amountOut);
            reserve1 = r1 + amountIn;
            reserve0 = r0 - amountOut;
        }
        emit Swap(msg.sender, zeroForOne, amountIn, amountOut);
    }

    function _amountOut(uint256 amountIn, uint256 rIn, uint256 rOut) internal pure returns (uint256) {
        require(rIn > 0 && rOut > 0, "Pair: no liquidity");
        uint256 inWithFee = amountIn * 997;
        return (inWithFee * rOut) / (rIn * 1000 + inWithFee);
    }

    function _safeTransferFrom(address token, address from, uint256 amount) internal {
        require(IToken(token).transferFrom(from, address(this), amount), "Pair: transferFrom failed");
    }

    function _safeTransfer(address token, address to, uint256 amount) internal {
        require(IToken(token).transfer(to, amount), "Pair: transfer failed");
    }
}
