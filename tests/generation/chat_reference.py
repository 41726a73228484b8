#!/usr/bin/python3
"""Reference prompt for `glassbox generate --chat`: python3-jinja2 set up as transformers'
apply_chat_template sets it up (tests/chat_template/hf_reference.py), plus transformers'
continue_final_message cut, transcribed from transformers' render_jinja_template
(src/transformers/utils/chat_template_utils.py), and the text-generation pipeline's rule: continue
the final message when its role is "assistant" (unless told), else add the generation prompt.

Usage: chat_reference.py MODEL_DIR MESSAGES_FILE [--continue-final-message true|false|auto]
Prints the prompt's bytes; exit 1 with the exception on stderr when transformers would raise.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chat_template"))
import hf_reference  # noqa: E402


def continue_cut(rendered, chat):
    """transformers' code, as written there."""
    final_message = chat[-1]["content"]
    if isinstance(final_message, (list, tuple)):
        for content_block in reversed(final_message):
            if "text" in content_block:
                final_message = content_block["text"]
                break
        else:
            raise ValueError("continue_final_message is set but we could not find any text to continue "
                             "in the final message!")
    if final_message.strip() not in rendered:
        raise ValueError("continue_final_message is set but the final message does not appear in the chat")
    final_msg_loc = rendered.rindex(final_message.strip())
    if rendered[final_msg_loc: final_msg_loc + len(final_message.lstrip())] == final_message:
        return rendered[: final_msg_loc + len(final_message.lstrip())]
    return rendered[: final_msg_loc + len(final_message.strip())]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model_dir")
    ap.add_argument("messages")
    ap.add_argument("--continue-final-message", default="auto", choices=["true", "false", "auto"])
    a = ap.parse_args()
    with open(a.messages, encoding="utf-8") as f:
        messages = json.load(f)
    cont = messages[-1]["role"] == "assistant" if a.continue_final_message == "auto" else a.continue_final_message == "true"
    try:
        rendered = hf_reference.render(a.model_dir, messages, add_generation_prompt=not cont)
        if cont:
            rendered = continue_cut(rendered, messages)
    except Exception as e:  # noqa: BLE001 - reported the same way for every failure
        sys.stderr.write(f"{type(e).__name__}: {e}\n")
        return 1
    sys.stdout.buffer.write(rendered.encode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
