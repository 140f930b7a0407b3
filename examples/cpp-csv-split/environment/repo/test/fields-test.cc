#include <gtest/gtest.h>

#include "fields.h"

using fields::join;
using fields::split;
using Fields = std::vector<std::string>;

TEST(Split, Simple) { EXPECT_EQ(split("a,b,c"), (Fields{"a", "b", "c"})); }

TEST(Split, OtherDelimiter) {
  EXPECT_EQ(split("root:x:0:0", ':'), (Fields{"root", "x", "0", "0"}));
}

TEST(Split, NoDelimiter) { EXPECT_EQ(split("one"), (Fields{"one"})); }

TEST(Join, Fields) { EXPECT_EQ(join({"a", "b", "c"}), "a,b,c"); }
