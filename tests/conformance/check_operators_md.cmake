# ctest ops_markdown_up_to_date: docs/OPERATORS.md must equal `glassbox ops --markdown`.
# Regenerate with: build/src/cli/glassbox ops --markdown > docs/OPERATORS.md
execute_process(COMMAND ${GLASSBOX} ops --markdown OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "glassbox ops --markdown failed (${rc})")
endif()
file(READ ${OPERATORS_MD} committed)
if(NOT generated STREQUAL committed)
  message(FATAL_ERROR "docs/OPERATORS.md is stale: run `glassbox ops --markdown > docs/OPERATORS.md` and commit it")
endif()
