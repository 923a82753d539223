// Tokens of PTX text. A token views the text it came from; keep the text alive.
#pragma once

#include <cstdint>
#include <string_view>

#include "kiln/ptx/source_location.h"

namespace kiln::ptx {

enum class TokenKind : uint8_t {
  Identifier,  // opcode with modifiers (ld.global.f32), register (%r1, %tid.x), symbol, label
  Directive,   // .reg, .b32, .shared::cluster: a dot and a word, :: segments kept inside
  Integer,     // 42, 0x1F, 017, 42U
  Float,       // 0f3F800000, 0d3FF0000000000000, 1.5, 2e-3
  String,      // "text" (the quotes are part of the token)
  Punct,       // one of { } [ ] ( ) , ; : + - ! | @ < > = * / ~ & ^ ?
  End,         // end of input
};

struct Token {
  TokenKind kind = TokenKind::End;
  std::string_view text;
  SourceLocation location;
  uint32_t offset = 0;  // byte offset of text in the input

  bool is(TokenKind k, std::string_view t) const { return kind == k && text == t; }
  bool is_punct(char c) const {
    return kind == TokenKind::Punct && text.size() == 1 && text[0] == c;
  }
};

std::string_view token_kind_name(TokenKind kind);

}  // namespace kiln::ptx
