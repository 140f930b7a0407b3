package example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class RomanTest {
  @Test
  void formatsNumbers() {
    assertEquals("I", Roman.format(1));
    assertEquals("XIV", Roman.format(14));
    assertEquals("MMXXIV", Roman.format(2024));
    assertEquals("MMMCMXCIX", Roman.format(3999));
  }

  @Test
  void refusesNumbersOutOfRange() {
    assertThrows(IllegalArgumentException.class, () -> Roman.format(0));
    assertThrows(IllegalArgumentException.class, () -> Roman.format(4000));
  }

  @Test
  void parsesAdditiveNumerals() {
    assertEquals(3, Roman.parse("III"));
    assertEquals(1666, Roman.parse("MDCLXVI"));
  }

  @Test
  void refusesOtherLetters() {
    assertThrows(IllegalArgumentException.class, () -> Roman.parse("XIIZ"));
    assertThrows(IllegalArgumentException.class, () -> Roman.parse(""));
  }
}
