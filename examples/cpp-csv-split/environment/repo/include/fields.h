#pragma once
#include <string>
#include <vector>

namespace fields {

// The fields of one line of delimited text (CSV, a /etc/passwd line): the text between
// delimiters, in order. A line with n delimiters has n + 1 fields, some of them empty.
std::vector<std::string> split(const std::string& line, char delimiter = ',');

// The fields joined with the delimiter: join(split(line, d), d) == line.
std::string join(const std::vector<std::string>& fields, char delimiter = ',');

}  // namespace fields
