#pragma once

// Errors on the request path are values, not exceptions: every library declares an `enum class errc`
// registered as a std::error_code category, and fallible functions return result<T>.
#include <system_error>

#include <boost/outcome/std_result.hpp>
#include <boost/outcome/try.hpp>

namespace ferry {

template <typename T>
using result = boost::outcome_v2::std_result<T>;

using boost::outcome_v2::success;

}  // namespace ferry

// Returns early from the enclosing function with the error of a failed result.
#define FERRY_TRY(...) BOOST_OUTCOME_TRY(__VA_ARGS__)
