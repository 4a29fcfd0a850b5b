/* select.c — --include/--exclude rules over modules and functions (select.h). */
#include "select.h"

#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

static const char *const system_dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
                                          "/usr/local/lib/"};

static bool is_loader(const char *path) {
  const char *base = strrchr(path, '/');
  return !strncmp(base ? base + 1 : path, "ld-linux", 8);
}

static bool in_system_dir(const char *path) {
  for (size_t i = 0; i < sizeof system_dirs / sizeof system_dirs[0]; i++)
    if (!strncmp(path, system_dirs[i], strlen(system_dirs[i]))) return true;
  return false;
}

static bool by_default(const char *path, bool is_main) { return is_main || !in_system_dir(path); }

static bool module_matches(const core_rule *r, const char *path) {
  const char *base = strrchr(path, '/');
  return fnmatch(r->module, path, 0) == 0 || fnmatch(r->module, base ? base + 1 : path, 0) == 0;
}

bool core_rule_parse(const char *text, bool include, core_rule *rule) {
  char *copy = strdup(text);
  if (!copy || !*copy) {
    free(copy);
    return false;
  }
  char *colon = strchr(copy, ':');
  if (colon) *colon = '\0';
  *rule = (core_rule){include, *copy ? copy : "*", colon && colon[1] ? colon + 1 : NULL, copy};
  return true;
}

void core_rule_free(core_rule *rule) { free(rule->text); }

bool core_select_module(const core_selection *sel, const char *path, bool is_main) {
  if (is_loader(path)) return false;
  bool any = by_default(path, is_main);
  for (size_t i = 0; i < sel->nrules; i++) {
    const core_rule *r = &sel->rules[i];
    if (!module_matches(r, path)) continue;
    if (r->include) any = true;
    else if (!r->function) any = false;
  }
  return any;
}

bool core_select_function(const core_selection *sel, const char *path, bool is_main, const char *name) {
  if (is_loader(path)) return false;
  bool on = by_default(path, is_main);
  for (size_t i = 0; i < sel->nrules; i++) {
    const core_rule *r = &sel->rules[i];
    if (module_matches(r, path) && (!r->function || fnmatch(r->function, name, 0) == 0)) on = r->include;
  }
  return on;
}
