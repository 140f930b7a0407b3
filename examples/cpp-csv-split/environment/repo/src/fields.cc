#include "fields.h"

namespace fields {

std::vector<std::string> split(const std::string& line, char delimiter) {
  std::vector<std::string> out;
  std::string field;
  for (char c : line) {
    if (c == delimiter) {
      if (!field.empty()) out.push_back(field);
      field.clear();
    } else {
      field += c;
    }
  }
  if (!field.empty()) out.push_back(field);
  return out;
}

std::string join(const std::vector<std::string>& fields, char delimiter) {
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (i > 0) out += delimiter;
    out += fields[i];
  }
  return out;
}

}  // namespace fields
