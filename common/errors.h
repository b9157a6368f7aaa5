// UserError: a problem with what the user gave us (a config file, a flag, a path).
//
// Tools catch it at their boundary, print its one-line message and exit 2. Internal bugs are
// not UserErrors: they are asserts (or Halide::InternalError) and exit 1.
#pragma once

#include <stdexcept>
#include <string>

namespace schedforge {

class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string &message) : std::runtime_error(message) {}
};

} // namespace schedforge
