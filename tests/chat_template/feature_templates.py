r"""Templates that exercise the Jinja2 subset glassbox implements, feature by feature, each
rendered by glassbox and by python3-jinja2 (hf_reference.py) on a few message sets and compared
byte for byte (compare_with_jinja2.py). Plus constructs glassbox refuses, with the line:column
the refusal must name."""

FEATURE_TEMPLATES = {
    "whitespace": (
        "A\n  {% if true %}\n    x\n  {% endif %}\nB  {{ 1 }}  {% if true %}y{% endif %}\n"
        "{%- if true -%}\n   stripped   \n{%- endif -%}\n"
        "  {%+ if true %}kept-indent{% endif +%}\n"
        "{# comment #}\n  {#- trimmed comment -#}  \n"
        "{% raw %}{{ not rendered }} {% if %}{% endraw %}\n"
        "\t{% for m in messages %}\n\t[{{ m.role }}]\n\t{% endfor %}\n"
        "{{- ' dash-var ' -}}\n\n  end\r\nwindows\r\n"
    ),
    "loops": (
        "{% for m in messages %}{{ loop.index }}/{{ loop.index0 }}/{{ loop.revindex }}/{{ loop.revindex0 }}"
        "/{{ loop.first }}/{{ loop.last }}/{{ loop.length }}/{{ loop.previtem.role if loop.previtem is defined else '-' }}"
        "/{{ loop.nextitem.role if loop.nextitem is defined else '-' }}/{{ loop.cycle('odd', 'even') }}\n{% endfor %}"
        "{% for m in messages if m.role == 'user' %}U{{ loop.index }}of{{ loop.length }} {% else %}no users{% endfor %}\n"
        "{% for x in [] %}never{% else %}empty-else{% endfor %}\n"
        "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i > 5 %}{% break %}{% endif %}{{ i }}{% endfor %}\n"
        "{% for k, v in {'a': 1, 'b': [2, 3]}.items() %}{{ k }}={{ v }};{% endfor %}\n"
        "{% for a, b in [(1, 2), [3, 4]] %}{{ a + b }},{% endfor %}\n"
        "{% for i in range(2) %}{% for j in range(2) %}{{ loop.index }}{{ i }}{{ j }} {% endfor %}{% endfor %}\n"
        "{% for c in 'añb' %}<{{ c }}>{% endfor %}{% for k in {'x': 1, 'y': 2} %}{{ k }}{% endfor %}\n"
        "{% for i in range(1, 10, 3) %}{{ i }}{% endfor %}{% for i in range(5, 0, -2) %}{{ i }}{% endfor %}\n"
    ),
    "scoping": (
        "{% set x = 'outer' %}{% for m in messages %}{% set x = 'inner' ~ loop.index %}{{ x }} {% endfor %}|{{ x }}\n"
        "{% set ns = namespace(count=0, last=none, seen=[]) %}{% for m in messages %}{% set ns.count = ns.count + 1 %}"
        "{% set ns.last = m.role %}{% set ns.seen = ns.seen + [m.role] %}{% endfor %}{{ ns.count }} {{ ns.last }} {{ ns.seen }}\n"
        "{% if true %}{% set leaked = 'yes' %}{% endif %}{{ leaked }}\n"
        "{% set block %}B:{% for m in messages %}{{ m.role[0] }}{% endfor %}{% endset %}[{{ block }}] {{ block|length }}\n"
        "{% set t = 1, 2 %}{{ t }} {{ t[1] }}\n"
        "{% set n2 = namespace({'k': 'v'}) %}{{ n2.k }} {{ n2.missing is defined }}\n"
    ),
    "macros": (
        "{% macro turn(role, text, sep='\\n', upper=false) -%}\n"
        "<{{ role|upper if upper else role }}>{{ text }}{{ sep }}{{ suffix }}\n"
        "{%- endmacro %}"
        "{% set suffix = '~' %}"
        "{% for m in messages %}{{ turn(m.role, m.content) }}{{ turn(m.role, 'x', sep='|', upper=true) }}{% endfor %}\n"
        "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}\n"
        "{% macro opt(a, b) %}[{{ a }}|{{ b }}|{{ b is defined }}]{% endmacro %}{{ opt(1) }}{{ opt(b=2) }}\n"
        "{% filter upper %}filtered {{ messages|length }} block{% endfilter %}\n"
        "{% generation %}generation-body {{ messages[0].role if messages else '' }}{% endgeneration %}\n"
    ),
    "expressions": (
        "{{ 7 + 3 }} {{ 7 - 10 }} {{ 7 * 3 }} {{ 7 / 2 }} {{ 6 / 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }}"
        " {{ 7 % -3 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ 1 + 2.5 }} {{ true + 1 }}\n"
        "{{ 0.1 + 0.2 }} {{ 1 / 3 }} {{ 1e16 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 123456789.125 }} {{ -0.0 }} {{ 2.0 }} {{ 1e22 }}"
        " {{ 3.14159265358979 }} {{ 1_000 }} {{ 100 / 7 }}\n"
        "{{ 1 == 1.0 }} {{ 'a' != 'b' }} {{ 'abc' < 'abd' }} {{ [1, 2] < [1, 3] }} {{ 2 >= 2 }} {{ none == none }}"
        " {{ (1, 2) == [1, 2] }} {{ {'a': 1} == {'a': 1} }}\n"
        "{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'z' not in 'abc' }} {{ 3 not in [1] }}\n"
        "{{ '' or 'fallback' }} {{ 'first' or 'second' }} {{ 0 and 'x' }} {{ 1 and 'x' }} {{ not none }} {{ not [] }}\n"
        "{{ 'yes' if messages else 'no' }} [{{ 'only-if' if false }}] {{ 'a' if false else 'b' if true else 'c' }}\n"
        "{{ 'con' ~ 'cat' ~ 1 ~ none ~ true ~ 1.5 ~ [1] }} {{ 'x' * 3 }} {{ [0] * 2 }} {{ [1] + [2] }} {{ 'a' + 'b' }}\n"
        "{{ 'esc\\tapes \\'q\\' \\\"dq\\\" \\\\ \\u00e9 \\x41 \\n' }}{{ \"it's\" }} {{ 'adj' 'acent' }}\n"
        "{{ [1, 'two', none, true, 1.5, {'k': 'v'}, (1,), (), ['n']] }} {{ {'a': 'it\\'s', 'b': \"q\\\"\"} }}\n"
        "{{ -(3) }} {{ -(messages|length) }} {{ +2 }} {{ (1 + 2) * 3 }} {{ 1 + 2 * 3 }} {{ 2 * 3 ** 2 }}\n"
        "{{ messages|length > 1 and messages[0].role == 'system' }}\n"
    ),
    "subscripts": (
        "{% if messages %}{{ messages[0].role }} {{ messages[-1]['role'] }}{% endif %} {{ messages[99] }}|{{ messages[::-1]|map(attribute='role')|join(',') }}\n"
        "{{ [1, 2, 3, 4, 5][1:] }} {{ [1, 2, 3, 4, 5][:-1] }} {{ [1, 2, 3, 4, 5][::2] }} {{ [1, 2, 3, 4, 5][-2:] }}"
        " {{ [1, 2, 3, 4, 5][3:1:-1] }} {{ [1, 2, 3][5:] }} {{ (1, 2, 3)[1:] }}\n"
        "{{ 'héllo wörld'[1:4] }} {{ 'héllo'[::-1] }} {{ 'héllo'[-1] }} {{ 'abc'.0 if false else 'abc'[0] }} {{ [7, 8].1 }}\n"
        "{{ {'a': {'b': [10, 20]}}['a']['b'][1] }} {{ {'a': 1}.a }} {{ {'a': 1}.missing }}|{{ {'a': 1}['missing'] }}|\n"
        "{{ none.anything }}|{{ 'str'.nothing }}|{{ (messages[0] or {}).nokey }}|{{ ((messages[0] or {}).nokey is defined) }}\n"
    ),
    "string_methods": (
        "{% set s = '  Hello, World! Hello!  ' %}"
        "[{{ s.strip() }}][{{ s.lstrip() }}][{{ s.rstrip() }}][{{ 'xxhixx'.strip('x') }}][{{ '\\n\\nA\\n'.lstrip('\\n') }}]\n"
        "{{ s.startswith('  He') }} {{ s.endswith(('!', '?')) }} {{ 'abc'.startswith(('x', 'a')) }} {{ ''.endswith('') }}\n"
        "{{ s.replace('Hello', 'Bye') }}|{{ s.replace('Hello', 'Bye', 1) }}|{{ 'aaa'.replace('a', 'b', 2) }}|{{ 'ab'.replace('', '-') }}\n"
        "{{ 'a,b,,c'.split(',') }} {{ '  a  b c '.split() }} {{ 'a b c d'.split(' ', 2) }} {{ 'a b c d'.rsplit(' ', 1) }}"
        " {{ 'x</think>y</think>z'.split('</think>')[-1] }} {{ ' a b '.split(none, 1) }} {{ ' a  b c '.rsplit(none, 1) }} {{ 'a,b,c'.rsplit(',') }}\n"
        "{{ 'MiXeD case'.upper() }} {{ 'MiXeD case'.lower() }} {{ 'hello wORLD they\\'re'.title() }} {{ 'hELLO'.capitalize() }}\n"
        "{{ 'banana'.find('an') }} {{ 'banana'.rfind('an') }} {{ 'banana'.find('x') }} {{ 'banana'.count('a') }} {{ 'ña'.find('a') }}\n"
        "{{ ', '.join(['a', 'b']) }} {{ 'l1\\nl2\\r\\nl3'.splitlines() }} {{ '123'.isdigit() }} {{ 'abc'.isalpha() }}"
        " {{ 'abc'.isupper() }} {{ '  '.isspace() }} {{ 'prefix-x'.removeprefix('prefix-') }}\n"
        "{% for m in messages %}{{ m.content.strip() if m.content is string else '' }}|{% endfor %}\n"
    ),
    "filters": (
        "{{ messages|length }} {{ messages|count }} {{ 'héllo'|length }} {{ {'a': 1}|length }} {{ '  t  '|trim }}|{{ 'xxtxx'|trim('x') }}\n"
        "{{ ['a', 'b', 1]|join('-') }} {{ messages|map(attribute='role')|join }} {{ messages|join(', ', attribute='role') }}\n"
        "{{ undefined_var|default('dflt') }} {{ ''|default('empty', true) }} {{ ''|default('not-used') }}| {{ none|d('n') }}\n"
        "{{ {'b': 2, 'a': 1}|items|list }} {{ {'b': 2, 'a': 1}|dictsort }} {{ {'b': 2, 'a': 1}|dictsort(by='value', reverse=true) }}\n"
        "{{ [3, 1, 2]|first }} {{ [3, 1, 2]|last }} {{ 'abc'|list }} {{ 42|string ~ '!' }} {{ '12'|int + 1 }} {{ '3.7'|int }}"
        " {{ 'x'|int }} {{ 'x'|int(-1) }} {{ 3.9|int }} {{ '2.5'|float }} {{ 4|float }}\n"
        "{{ 'MiXed'|upper }} {{ 'MiXed'|lower }} {{ 'hello big-world (x)'|title }} {{ 'hELLO'|capitalize }}"
        " {{ 'a-b-c'|replace('-', '+') }} {{ 'aaa'|replace('a', 'b', 2) }}\n"
        "{{ messages|selectattr('role', 'equalto', 'user')|list|length }} {{ messages|rejectattr('role', 'eq', 'user')|map(attribute='role')|list }}"
        " {{ [0, 1, 2, '', 'x']|select|list }} {{ [1, 2, 3, 4]|select('odd')|list }} {{ [1, 2, 3, 4]|reject('even')|list }}"
        " {{ messages|selectattr('content')|list|length }}\n"
        "{{ [3, 1, 2]|sort }} {{ ['b', 'A', 'c']|sort }} {{ ['b', 'A', 'c']|sort(case_sensitive=true) }} {{ [3, 1, 2]|sort(reverse=true) }}"
        " {{ messages|sort(attribute='role')|map(attribute='role')|list }}\n"
        "{{ [1, 2, 1, 'a', 'A']|unique|list }} {{ [4, 9, 2]|min }} {{ [4, 9, 2]|max }} {{ ['b', 'A']|max }} {{ [1, 2, 3]|sum }}"
        " {{ [{'n': 2}, {'n': 5}]|sum(attribute='n') }} {{ -3|abs }} {{ 2.5|round }} {{ 3.5|round }} {{ 2.675|round(2) }}"
        " {{ 2.1|round(0, 'ceil') }} {{ 7|round }}\n"
        "{{ [1, 2, 3]|reverse|list }} {{ 'abc'|reverse }} {{ ['a', 'b']|map('upper')|list }} {{ [' a ', 'b ']|map('trim')|join('|') }}\n"
        "{{ 'line1\\nline2\\n\\nline4'|indent(2) }}|{{ 'a\\nb'|indent(first=true) }}|{{ 'a\\n\\nb'|indent('> ', blank=true) }}\n"
        "{{ [1, 2]|list|tojson }} {{ 'safe <b>'|safe }}\n"
    ),
    "tojson": (
        "{{ messages|tojson }}\n{{ tools|tojson }}\n"
        "{{ {'b': 1, 'a': [1, 2.5, none, true, 'é\"\\\\\\n\\t\\u0001<>&']}|tojson }}\n"
        "{{ {'b': 1, 'a': {'c': [], 'd': {}}}|tojson(indent=2) }}\n"
        "{{ {'b': 1, 'a': [1, [2]]}|tojson(indent=4, sort_keys=true) }}\n"
        "{{ {'b': 1, 'a': [1]}|tojson(separators=(',', ':')) }} {{ 'ü🙂'|tojson(ensure_ascii=true) }} {{ 'ü🙂'|tojson }}\n"
        "{{ [1, 2]|tojson(2) }} {{ 1.0|tojson }} {{ 1e20|tojson }} {{ 12|tojson }} {{ none|tojson }} {{ 'x'|tojson }}\n"
        "{% for t in tools or [] %}{{ t.function|tojson(indent='\\t') }}{% endfor %}\n"
    ),
    "tests": (
        "{% for v in [none, true, false, 0, 1, 2.5, 'str', [1], {'k': 1}, (1,), range(2)] %}"
        "{{ v is none }}{{ v is boolean }}{{ v is true }}{{ v is false }}{{ v is integer }}{{ v is float }}{{ v is number }}"
        "{{ v is string }}{{ v is mapping }}{{ v is sequence }}{{ v is iterable }}{{ v is defined }}{{ v is callable }};"
        "{% endfor %}\n"
        "{{ nope is defined }} {{ nope is undefined }} {{ nope is not defined }} {{ nope is sequence }} {{ nope is iterable }}\n"
        "{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 9 is divisibleby(4) }} {{ 1 is eq 1 }} {{ 1 is ne 2 }}"
        " {{ 1 is lt 2 }} {{ 2 is le 2 }} {{ 3 is gt 2 }} {{ 3 is ge 4 }} {{ 1 is in [1, 2] }} {{ 'a' is equalto 'a' }}\n"
        "{{ none is sameas none }} {{ true is sameas true }} {{ 'abc' is lower }} {{ 'ABC' is upper }} {{ 'aBc' is lower }}\n"
        "{{ raise_exception is callable }} {{ messages is not string }} {{ (messages[0] is mapping) if messages else '' }}\n"
    ),
    "undefined": (
        "[{{ nope }}][{{ nope|length }}][{{ nope|default('d') }}][{{ nope ~ 'x' }}][{{ nope == nope }}][{{ nope == none }}]"
        "[{{ nope|list }}][{{ nope|trim }}][{{ nope|string }}][{{ nope|join }}][{{ nope|upper }}][{{ nope|items|list }}]"
        "[{% for x in nope %}x{% else %}no-iter{% endfor %}][{{ 'yes' if nope else 'no' }}][{{ nope is none }}]"
        "[{{ 'a' in nope }}][{{ nope|first }}][{{ (messages[0] or {}).missing }}][{{ (messages[0] or {}).missing|default('md') }}]"
        "[{% if (messages[0] or {}).missing %}t{% else %}f{% endif %}][{{ none|default('nd') }}][{{ none ~ '' }}]\n"
    ),
    "strftime": (
        "{{ strftime_now('%Y-%m-%d %H:%M:%S') }}|{{ strftime_now('%d %b %Y') }}|{{ strftime_now('%A %B %j %p %I %y %e') }}"
        "|{{ strftime_now('%f') }}|{{ strftime_now('%z%Z') }}|{{ strftime_now('100%% %a %U %w') }}|{{ strftime_now('') }}|"
        "{{ strftime_now('%c') }}|{{ strftime_now('%x %X %D %T %R') }}\n"
    ),
    "dict_methods": (
        "{% for m in messages %}{{ m.get('role') }}:{{ m.get('missing', 'dflt') }}:{{ m.get('nope') }} {% endfor %}\n"
        "{{ {'a': 1, 'b': 2}.items()|list }} {{ {'a': 1}.keys()|list }} {{ {'a': 1}.values()|list }} {{ {'a': 1}.items()|length }}\n"
        "{% for k, v in (messages[0] if messages else {}).items() %}{{ k }}={{ v }};{% endfor %}\n"
        "{{ [1, 2, 1].count(1) }} {{ [5, 6].index(6) }} {{ {'k': 1}['items'] is callable }}\n"
    ),
    "llama31_like": (
        "{{- bos_token }}\n"
        "{%- if custom_tools is defined %}\n    {%- set tools = custom_tools %}\n{%- endif %}\n"
        "{%- if not tools_in_user_message is defined %}\n    {%- set tools_in_user_message = true %}\n{%- endif %}\n"
        "{%- if not date_string is defined %}\n    {%- if strftime_now is defined %}\n"
        "        {%- set date_string = strftime_now(\"%d %b %Y\") %}\n    {%- else %}\n"
        "        {%- set date_string = \"26 Jul 2024\" %}\n    {%- endif %}\n{%- endif %}\n"
        "{%- if not tools is defined %}\n    {%- set tools = none %}\n{%- endif %}\n\n"
        "{#- This block extracts the system message, so we can slot it into the right place. #}\n"
        "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content']|trim %}\n"
        "    {%- set messages = messages[1:] %}\n{%- else %}\n    {%- set system_message = \"\" %}\n{%- endif %}\n\n"
        "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}\n"
        "{%- if tools is not none %}\n    {{- \"Environment: ipython\\n\" }}\n{%- endif %}\n"
        "{{- \"Cutting Knowledge Date: December 2023\\n\" }}\n{{- \"Today Date: \" + date_string + \"\\n\\n\" }}\n"
        "{%- if tools is not none and not tools_in_user_message %}\n"
        "    {{- \"You have access to the following functions.\\n\\n\" }}\n"
        "    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- \"\\n\\n\" }}\n    {%- endfor %}\n{%- endif %}\n"
        "{{- system_message }}\n{{- \"<|eot_id|>\" }}\n\n"
        "{%- if tools_in_user_message and not tools is none %}\n"
        "    {%- if messages | length != 0 %}\n        {%- set first_user_message = messages[0]['content']|trim %}\n"
        "        {%- set messages = messages[1:] %}\n    {%- else %}\n"
        "        {{- raise_exception(\"Cannot put tools in the first user message when there's no first user message!\") }}\n"
        "{%- endif %}\n    {{- '<|start_header_id|>user<|end_header_id|>\\n\\n' -}}\n"
        "    {{- \"Given the following functions, please respond with a JSON for a function call \" }}\n"
        "    {{- \"with its proper arguments that best answers the given prompt.\\n\\n\" }}\n"
        "    {%- for t in tools %}\n        {{- t | tojson(indent=4) }}\n        {{- \"\\n\\n\" }}\n    {%- endfor %}\n"
        "    {{- first_user_message + \"<|eot_id|>\"}}\n{%- endif %}\n\n"
        "{%- for message in messages %}\n"
        "    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}\n"
        "        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'+ message['content'] | trim + '<|eot_id|>' }}\n"
        "    {%- elif 'tool_calls' in message %}\n"
        "        {%- if not message.tool_calls|length == 1 %}\n"
        "            {{- raise_exception(\"This model only supports single tool-calls at once!\") }}\n        {%- endif %}\n"
        "        {%- set tool_call = message.tool_calls[0].function %}\n"
        "        {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}\n"
        "        {{- '{\"name\": \"' + tool_call.name + '\", ' }}\n        {{- '\"parameters\": ' }}\n"
        "        {{- tool_call.arguments | tojson }}\n        {{- \"}\" }}\n        {{- \"<|eot_id|>\" }}\n"
        "    {%- elif message.role == \"tool\" or message.role == \"ipython\" %}\n"
        "        {{- \"<|start_header_id|>ipython<|end_header_id|>\\n\\n\" }}\n"
        "        {%- if message.content is mapping or message.content is iterable %}\n"
        "            {{- message.content | tojson }}\n        {%- else %}\n            {{- message.content }}\n        {%- endif %}\n"
        "        {{- \"<|eot_id|>\" }}\n    {%- endif %}\n{%- endfor %}\n"
        "{%- if add_generation_prompt %}\n    {{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}\n{%- endif %}\n"
    ),
    "mistral_like": (
        "{%- if messages[0]['role'] == 'system' %}\n    {%- set system_message = messages[0]['content'] %}\n"
        "    {%- set loop_messages = messages[1:] %}\n{%- else %}\n    {%- set loop_messages = messages %}\n{%- endif %}\n\n"
        "{{- bos_token }}\n{%- for message in loop_messages %}\n"
        "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}\n"
        "        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}\n"
        "    {%- endif %}\n    {%- if message['role'] == 'user' %}\n"
        "        {%- if loop.first and system_message is defined %}\n"
        "            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}\n"
        "        {%- else %}\n            {{- ' [INST] ' + message['content'] + ' [/INST]' }}\n        {%- endif %}\n"
        "    {%- elif message['role'] == 'assistant' %}\n        {{- ' ' + message['content'] + eos_token}}\n"
        "    {%- else %}\n        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}\n"
        "    {%- endif %}\n{%- endfor %}\n"
    ),
    "chatml_generation": (
        "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n'}}"
        "{% if message['role'] == 'assistant' %}{% generation %}{{ message['content'] + '<|im_end|>' }}{% endgeneration %}"
        "{% else %}{{ message['content'] + '<|im_end|>' }}{% endif %}{{ '\\n' }}{% endfor %}"
        "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
    ),
    "smol_like": (
        "{%- set ns = namespace(system='', reasoning=(enable_thinking if enable_thinking is defined else true)) -%}\n"
        "{%- for message in messages -%}\n  {%- if message.role == 'system' -%}{%- set ns.system = message.content|trim -%}{%- endif -%}\n{%- endfor -%}\n"
        "<|im_start|>system\n## Metadata\nReasoning Mode: {{ '/think' if ns.reasoning else '/no_think' }}\n"
        "{{ ns.system.replace('/think', '').replace('/no_think', '').rstrip() }}<|im_end|>\n"
        "{%- for message in messages if message.role != 'system' -%}\n"
        "  {%- set content = message.content if message.content is string else '' -%}\n"
        "  {%- if message.role == 'assistant' and '</think>' in content -%}\n"
        "    {%- set content = content.split('</think>')[-1].lstrip('\\n') -%}\n  {%- endif %}\n"
        "<|im_start|>{{ message.role }}\n{{ content }}<|im_end|>\n{%- endfor -%}\n"
        "{%- if add_generation_prompt %}\n<|im_start|>assistant\n{%- endif -%}\n"
    ),
    "tricky": (
        "x  {% if true %}same-line{% endif %}\n  {{ 'var-not-lstripped' }}\n{% set q = '%}' %}[{{ q }}]{{ '}}' }}"
        "{# comment with %} and {{ inside #}\n    {# indented comment #}\nafter{{ {'a': {'b': 1}} }}\n"
        "{% if true %}\n{% endif +%}\nkept-newline {%- raw -%}  {{ raw }}  {%- endraw -%}  x\n"
        "{{ 'a' ~ 1.0 }} {{ 1.0 * 3 }} {{ 10 / 4 * 2 }} {{ 2 ** 0.5 }} {{ 7 // 2.0 }} {{ -7 // 2.0 }} {{ 1e308 * 10 }}"
        " {{ 0.1 * 3 }} {{ true and 0 }} {{ [] or none }} {{ 'é' > 'e' }} {{ 'b' in none if false else 'guard' }}\n"
        "{{ messages|selectattr('role', 'in', ['user', 'system'])|list|length }} {{ messages|map('tojson')|join(',') }}"
        " {{ tools is none }} {{ documents }} {{ range(3)|list }} {{ range(3)|length }}"
        " {% for i in range(3)|reverse %}{{ i }}{% endfor %} {{ (messages|last).role if messages else '' }}\n"
        "{% set y = y|default(5) %}{{ y }} {% set nsx = namespace() %}{% set nsx.v = 1 %}{{ nsx.v }}"
        " {{ messages|dictsort if false else '' }} {{ loop }}|{{ messages[0]['content'][0] if messages else '' }}\n"
        "{%- for m in messages -%}\n  {{- m.role -}}\n  {%- if not loop.last %}, {% endif -%}\n{%- endfor %}\n"
        "   {%- if true %} lead-dash{% endif %}\n{{ messages|length is divisibleby 2 }} {{ 3 is not odd }}\n"
        "{{ 'x' if messages|length > 2 and messages[2].content is defined else 'y' }}"
        " {{ messages|map(attribute='content')|select('string')|map('length')|list }}"
        " {{ messages|rejectattr('content', 'none')|list|count }} {{ [1, [2, [3]]]|tojson }}\n"
    ),
    "errors_at_runtime": (
        "{%- for m in messages %}{% if m.role == 'critic' %}{{ raise_exception('critic role: ' ~ m.content) }}{% endif %}"
        "{% if m.content is number %}{{ m.content + undefined_thing.attr }}{% endif %}"
        "{% if m.role == 'tool' %}{{ messages.append(m) }}{% endif %}{% endfor %}ok"
    ),
}

# Feature templates that fail on some message sets by design (the others must render: a case where
# the reference fails tests nothing).
MAY_FAIL = {"errors_at_runtime", "mistral_like", "llama31_like", "chatml_generation"}

# Message sets (names from message_sets.py) each feature template is rendered with.
FEATURE_MESSAGE_SETS = ["system_multi_turn", "unicode", "tool_call_roundtrip", "content_number", "empty_messages",
                        "unknown_role", "think_in_content", "enable_thinking_false"]

# Constructs glassbox refuses: (name, template, text the error must contain, "line:column" it must name
# or None where the position is checked only to be present). Jinja2 renders most of them; glassbox must fail
# loudly instead of rendering something else.
UNSUPPORTED = [
    ("include_tag", "{% include 'other.jinja' %}", "include", "1:4"),
    ("call_block", "hello\n{% call m() %}x{% endcall %}", "call", "2:4"),
    ("recursive_loop", "{% for x in messages recursive %}{% endfor %}", "recursive", "1:22"),
    ("wordwrap_filter", "a\n  {{ 'x'|wordwrap(5) }}", "wordwrap", "2:10"),
    ("format_method", "{{ '{}'.format(1) }}", "format", "1:8"),
    ("big_integer", "{{ 10 ** 20 }}", "64 bits", "1:7"),
    ("percent_format", "{{ 'x%s' % 1 }}", "formatting", "1:10"),
    ("print_range", "{{ range(3) }}", "range", "1:9"),
    ("unicode_upper", "{{ 'é'|upper }}", "Unicode case", "1:8"),
    ("star_args", "{{ raise_exception(*messages) }}", "*args", "1:20"),
    ("chained_compare", "{{ 1 < 2 < 3 }}", "chained comparison", "1:10"),
    ("with_tag", "{% with a = 1 %}{{ a }}{% endwith %}", "with", "1:4"),
    ("cycler_global", "{{ cycler(1, 2).next() }}", "cycler", None),
]

# Templates Jinja2 itself rejects at compile time: glassbox must reject them too (position checked when given).
SYNTAX_ERRORS = [
    ("unclosed_if", "{% if true %}x", None),
    ("unknown_filter", "{{ x|no_such_filter }}", "1:6"),
    ("unknown_test", "{{ x is no_such_test }}", "1:9"),
    ("stray_endfor", "{% endfor %}", "1:4"),
    ("unterminated_var", "{{ x ", None),
    ("break_outside_loop", "{% break %}", "1:4"),
    ("bad_token", "{{ x $ y }}", "1:6"),
    # Jinja2 takes the `if` after a test name as the test's argument: a syntax error in both.
    ("test_swallows_if", "{{ x is mapping if true else 1 }}", None),
]
