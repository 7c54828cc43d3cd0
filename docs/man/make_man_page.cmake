# Writes the manual page tcsolve.1 with help2man (cmake -P; docs/CMakeLists.txt runs it at build
# time, ctest's man_page in a scratch folder):
#   cmake -DTCSOLVE=EXE -DHELP2MAN=EXE -DINCLUDE=tcsolve.h2m -DWORK=DIR -DOUTPUT=tcsolve.1 -P make_man_page.cmake
# help2man reads `tcsolve --help` (DESCRIPTION, the subcommand list). The page's version is the
# first line of `tcsolve --version` ("tcsolve 0.3.0 (commit ...)"), passed as --version-string:
# the lines after it name the libraries of the machine that built the page, which help2man would
# print as text of the DESCRIPTION. The SYNOPSIS is every subcommand's synopsis from `tcsolve
# help-synopsis` (generated from the option tables, as docs/guide/cli.md's), set without filling;
# INCLUDE adds the hand-written sections.
foreach(var TCSOLVE HELP2MAN INCLUDE WORK OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "make_man_page.cmake: -D${var}=... is required")
  endif()
endforeach()
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TCSOLVE} help-synopsis OUTPUT_VARIABLE synopsis RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_man_page.cmake: '${TCSOLVE} help-synopsis' failed (${rc})")
endif()
# roff: a backslash is \e, a hyphen \-, and a line starting with . or ' is not a request
string(REPLACE "\\" "\\e" synopsis "${synopsis}")
string(REPLACE "-" "\\-" synopsis "${synopsis}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" synopsis "${synopsis}")
file(WRITE ${WORK}/synopsis.h2m "[SYNOPSIS]\n.nf\n${synopsis}.fi\n")
execute_process(COMMAND ${TCSOLVE} --version OUTPUT_VARIABLE version RESULT_VARIABLE rc)
string(REGEX MATCH "^tcsolve ([^\n]+)" version "${version}")
if(NOT rc EQUAL 0 OR NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "make_man_page.cmake: '${TCSOLVE} --version' failed (${rc}) or printed no 'tcsolve VERSION' line")
endif()
set(version "tcsolve ${CMAKE_MATCH_1}")
execute_process(
  COMMAND ${HELP2MAN} --no-info --no-discard-stderr
          "--name=FP32-accurate GEMM on tensor cores and a mixed-precision linear solver"
          "--version-string=${version}" --include=${WORK}/synopsis.h2m --include=${INCLUDE}
          --output=${OUTPUT} ${TCSOLVE}
  RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_man_page.cmake: help2man failed (${rc}): ${err}")
endif()
