/* select.h — which modules and functions are instrumented: Caliper's address
 * context, given on the command line as --include/--exclude rules.
 *
 * A rule is MODULE or MODULE:FUNCTION, globs (fnmatch); MODULE matches a
 * module's path or its file name.  By default the main program and the
 * libraries outside the system's library directories are instrumented; the
 * rules are applied in order on top of that, and the last one that matches a
 * function decides.  The dynamic loader is never instrumented. */
#ifndef CORE_SELECT_H
#define CORE_SELECT_H

#include <stdbool.h>
#include <stddef.h>

typedef struct core_rule {
  bool include;
  const char *module;   /* glob */
  const char *function; /* glob, NULL: every function */
  char *text;           /* owns the strings above */
} core_rule;

typedef struct core_selection {
  const core_rule *rules;
  size_t nrules;
} core_selection;

/* Parses "MODULE[:FUNCTION]" (split at the first ':'; an empty MODULE is
 * "*") into RULE, freed with core_rule_free.  False when TEXT is empty. */
bool core_rule_parse(const char *text, bool include, core_rule *rule);
void core_rule_free(core_rule *rule);

/* May any function of the module at PATH be instrumented? */
bool core_select_module(const core_selection *sel, const char *path, bool is_main);

/* Is function NAME of the module at PATH instrumented? */
bool core_select_function(const core_selection *sel, const char *path, bool is_main, const char *name);

#endif
