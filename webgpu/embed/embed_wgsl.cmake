# embed_wgsl.cmake — turns webgpu/*.wgsl into C string literals for libffn (ffn_wgsl_source()).
# Run as: cmake -DOUT=<file.c> -DTEMPLATE=<ffn_wgsl.c.in> -DFILES="<a.wgsl;b.wgsl>" -P embed_wgsl.cmake
# Each file becomes one string, line by line, with \ and " escaped; the table of names and
# strings is substituted into TEMPLATE. No Python needed. The output is written only when it
# changes, so an unchanged shader does not rebuild the library.
cmake_minimum_required(VERSION 3.25)
if(NOT OUT OR NOT TEMPLATE)
  message(FATAL_ERROR "embed_wgsl.cmake: OUT and TEMPLATE are required")
endif()

set(FFN_WGSL_TABLE "")
list(SORT FILES)
foreach(path IN LISTS FILES)
  get_filename_component(name "${path}" NAME)
  file(READ "${path}" text)
  string(REPLACE "\\" "\\\\" text "${text}")
  string(REPLACE "\"" "\\\"" text "${text}")
  string(REPLACE "\t" "\\t" text "${text}")
  string(REPLACE "\r" "" text "${text}")
  # one literal per line: "line\n"
  string(REPLACE "\n" "\\n\"\n    \"" text "${text}")
  string(APPEND FFN_WGSL_TABLE "    {\"${name}\",\n    \"${text}\"},\n")
endforeach()

configure_file("${TEMPLATE}" "${OUT}.tmp" @ONLY)
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
