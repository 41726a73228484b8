// One line per server event on stderr, with a UTC timestamp: loads, swaps, drains, errors.
#pragma once

#include <string>

namespace glassbox::server {
void log_line(const std::string& message);
}  // namespace glassbox::server
