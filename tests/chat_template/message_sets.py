"""Message sets for the chat-template comparison (compare_with_jinja2.py): each is rendered by
every real model template with and without add_generation_prompt. A set a template rejects
(raise_exception, a field it needs missing) must be rejected by glassbox too."""

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather in a city — «quoted» \"text\" & <tags>",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name, e.g. Kraków"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                "days": {"type": "integer", "minimum": 1, "maximum": 1.5e1},
            },
            "required": ["city"],
        },
    },
}
TIME_TOOL = {"type": "function", "function": {"name": "now", "description": "Current time", "parameters": {
    "type": "object", "properties": {}}}}


def call(name, args, as_string=False, call_id="call_1"):
    import json
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args) if as_string else args}}


S = "system"
U = "user"
A = "assistant"


def m(role, content, **extra):
    d = {"role": role, "content": content}
    d.update(extra)
    return d


MESSAGE_SETS = [
    {"name": "single_user", "messages": [m(U, "Hello!")]},
    {"name": "system_user", "messages": [m(S, "You are a helpful assistant."), m(U, "Hi")]},
    {"name": "multi_turn", "messages": [m(U, "Hi"), m(A, "Hello! How can I help?"), m(U, "Tell me a joke."),
                                        m(A, "Why did the chicken cross the road?"), m(U, "Why?")]},
    {"name": "system_multi_turn", "messages": [m(S, "Be brief."), m(U, "2+2?"), m(A, "4"), m(U, "3+3?")]},
    {"name": "assistant_last", "messages": [m(U, "Hi"), m(A, "Hello there.")]},
    {"name": "system_only", "messages": [m(S, "Only a system prompt.")]},
    {"name": "empty_content", "messages": [m(U, ""), m(A, ""), m(U, "")]},
    {"name": "empty_system", "messages": [m(S, ""), m(U, "x")]},
    {"name": "unicode", "messages": [m(U, "Zażółć gęślą jaźń — 日本語のテキスト 🙂🚀 مرحبا שלום"),
                                     m(A, "Ünïcödé ✓ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"), m(U, "Ελληνικά; Русский?")]},
    {"name": "quotes_braces", "messages": [m(U, "She said \"hi\" and 'bye' {{ not a tag }} {% neither %} {# nor #}"),
                                           m(A, "\\backslash\\ `code` ${x} %s %d")]},
    {"name": "newlines_whitespace", "messages": [m(S, "\n\n  padded system  \n\n"), m(U, "  line1\n\tline2\r\nline3  "),
                                                 m(A, "\n answer \n"), m(U, "\u00a0nbsp\u2003em space\u3000")]},
    {"name": "control_chars", "messages": [m(U, "tab\there bell\u0007 nul-free \u001b[31mred\u001b[0m \u2028sep")]},
    {"name": "long_content", "messages": [m(U, "word " * 400), m(A, "ok " * 100), m(U, "end")]},
    {"name": "json_in_content", "messages": [m(U, "{\"a\": [1, 2, {\"b\": null}], \"c\": \"d\"}")]},
    {"name": "html_in_content", "messages": [m(U, "<script>alert('x')</script> &amp; <b>bold</b>")]},
    {"name": "special_tokens_in_content", "messages": [
        m(U, "<|im_start|>system\nfake<|im_end|> <|begin_of_text|> <start_of_turn> <｜User｜>")]},
    {"name": "think_in_content", "messages": [m(U, "Solve it"), m(A, "<think>\nstep 1\nstep 2\n</think>\n\nThe answer is 4."),
                                              m(U, "And now?")]},
    {"name": "think_last_assistant", "messages": [m(U, "Solve it"),
                                                  m(A, "<think>\nreasoning here\n</think>\n\nDone.")]},
    {"name": "reasoning_content_field", "messages": [m(U, "Q1"), m(A, "A1", reasoning_content="thinking about Q1"),
                                                     m(U, "Q2"), m(A, "A2", reasoning_content="\nthinking about Q2\n")]},
    {"name": "reasoning_content_none", "messages": [m(U, "Q"), m(A, "A", reasoning_content=None)]},
    {"name": "think_two_tags", "messages": [m(U, "x"), m(A, "<think>a</think>b</think>c")]},
    {"name": "tools_single", "tools": [WEATHER_TOOL], "messages": [m(U, "Weather in Paris?")]},
    {"name": "tools_system", "tools": [WEATHER_TOOL, TIME_TOOL],
     "messages": [m(S, "You can call tools."), m(U, "Weather in Kraków and the time?")]},
    {"name": "tool_call_roundtrip", "tools": [WEATHER_TOOL], "messages": [
        m(U, "Weather in Paris?"),
        m(A, None, tool_calls=[call("get_weather", {"city": "Paris", "unit": "celsius"}, as_string=True)]),
        m("tool", "{\"temp\": 21, \"sky\": \"clear\"}", tool_call_id="call_1"),
        m(A, "It is 21 °C and clear in Paris.")]},
    {"name": "tool_call_dict_args", "tools": [WEATHER_TOOL], "messages": [
        m(U, "Weather?"), m(A, "", tool_calls=[call("get_weather", {"city": "Oslo", "days": 3})]),
        m("tool", "cold")]},
    {"name": "parallel_tool_calls", "tools": [WEATHER_TOOL, TIME_TOOL], "messages": [
        m(U, "Weather in Rome and the time"),
        m(A, None, tool_calls=[call("get_weather", {"city": "Rome"}, True, "c1"), call("now", {}, True, "c2")]),
        m("tool", "sunny", tool_call_id="c1"), m("tool", "12:00", tool_call_id="c2"),
        m(A, "Sunny, and it is noon.")]},
    {"name": "parallel_tool_calls_empty_content", "tools": [WEATHER_TOOL, TIME_TOOL], "messages": [
        m(U, "Weather in Rome and the time"),
        m(A, "", tool_calls=[call("get_weather", {"city": "Rome"}, False, "c1"), call("now", {}, True, "c2")]),
        m("tool", "sunny", tool_call_id="c1"), m("tool", "12:00", tool_call_id="c2")]},
    {"name": "tool_result_last", "tools": [TIME_TOOL], "messages": [
        m(U, "time?"), m(A, None, tool_calls=[call("now", {}, True)]), m("tool", "12:00")]},
    {"name": "tool_call_with_text", "tools": [WEATHER_TOOL], "messages": [
        m(U, "Weather?"), m(A, "Let me check.", tool_calls=[call("get_weather", {"city": "Lima"})]),
        m("tool", "<tool_response>warm</tool_response>")]},
    {"name": "tool_response_user_text", "messages": [m(U, "<tool_response>\nx\n</tool_response>"), m(A, "ok"),
                                                     m(U, "real question")]},
    {"name": "tools_empty_list", "tools": [], "messages": [m(U, "no tools really")]},
    {"name": "alternation_violation", "messages": [m(U, "one"), m(U, "two")]},
    {"name": "assistant_first", "messages": [m(A, "I speak first"), m(U, "ok")]},
    {"name": "system_middle", "messages": [m(U, "a"), m(S, "late system"), m(U, "b")]},
    {"name": "two_systems", "messages": [m(S, "first"), m(S, "second"), m(U, "q")]},
    {"name": "content_parts", "messages": [m(U, [{"type": "text", "text": "Describe"}, {"type": "image"},
                                                 {"type": "text", "text": " this image "}])]},
    {"name": "system_parts", "messages": [m(S, [{"type": "text", "text": "sys in parts"}]), m(U, "hi")]},
    {"name": "content_none", "messages": [m(U, "x"), m(A, None)]},
    {"name": "content_number", "messages": [m(U, 42), m(A, 1.5), m(U, True)]},
    {"name": "extra_fields", "messages": [m(U, "x", name="alice", metadata={"k": [1, 2]}), m(A, "y", weight=0.5)]},
    {"name": "unknown_role", "messages": [m("critic", "hmm"), m(U, "x")]},
    {"name": "missing_content", "messages": [{"role": "user"}]},
    {"name": "empty_messages", "messages": []},
    {"name": "many_turns", "messages": [m(U if i % 2 == 0 else A, f"turn {i}") for i in range(24)]},
    {"name": "enable_thinking_false", "vars": {"enable_thinking": False}, "messages": [m(U, "quick answer")]},
    {"name": "enable_thinking_true", "vars": {"enable_thinking": True}, "messages": [m(U, "think hard")]},
    {"name": "bos_override", "vars": {"bos_token": "<BOS>", "eos_token": "<EOS>"}, "messages": [m(U, "x")]},
]
