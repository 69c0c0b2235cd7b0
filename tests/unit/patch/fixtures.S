# Fixture functions for the patcher's tests: each is patched in place at a known instruction and
# then run, or only planned when the plan must be refused. Assembled into the test binary.
        .text
        .p2align 4
# long patch_add(long a, long b) { return a + b + 1; }  two instructions displaced
        .globl patch_add, patch_add_end
        .type patch_add, @function
patch_add:
        lea (%rdi,%rsi), %rax           # 4 bytes
        add $1, %rax                    # 4 bytes
        ret
patch_add_end:
        .size patch_add, patch_add_end - patch_add

# int patch_less(long a, long b): flags set before the site must survive the trampoline.
        .globl patch_less, patch_less_site, patch_less_end
        .type patch_less, @function
patch_less:
        cmp %rsi, %rdi                  # 3 bytes
patch_less_site:
        mov $0, %eax                    # 5 bytes, leaves the flags alone
        setl %al
        ret
patch_less_end:
        .size patch_less, patch_less_end - patch_less

# long patch_red_zone(long a): a leaf keeps a value below rsp (the red zone) across the site.
        .globl patch_red_zone, patch_red_zone_site, patch_red_zone_end
        .type patch_red_zone, @function
patch_red_zone:
        mov %rdi, -8(%rsp)              # 5 bytes
patch_red_zone_site:
        mov $7, %ecx                    # 5 bytes
        mov -8(%rsp), %rax
        add %rcx, %rax
        ret
patch_red_zone_end:
        .size patch_red_zone, patch_red_zone_end - patch_red_zone

# long patch_rip(long a) { return patch_value + a; }  a rip-relative load displaced
        .globl patch_rip, patch_rip_end
        .type patch_rip, @function
patch_rip:
        mov patch_value(%rip), %rax     # 7 bytes
        add %rdi, %rax
        ret
patch_rip_end:
        .size patch_rip, patch_rip_end - patch_rip

# long patch_call(void) { return patch_helper() + 1; }  a direct call displaced (last)
        .globl patch_call, patch_call_end
        .type patch_call, @function
patch_call:
        call patch_helper               # 5 bytes
        add $1, %rax
        ret
patch_call_end:
        .size patch_call, patch_call_end - patch_call

        .type patch_helper, @function
patch_helper:
        mov $41, %eax
        ret
        .size patch_helper, . - patch_helper

# long patch_branch(long a) { return a == 0 ? 2 : 1; }  a short jcc displaced (last)
        .globl patch_branch, patch_branch_end
        .type patch_branch, @function
patch_branch:
        test %rdi, %rdi                 # 3 bytes
        je 1f                           # 2 bytes
        mov $1, %eax
        ret
1:      mov $2, %eax
        ret
patch_branch_end:
        .size patch_branch, patch_branch_end - patch_branch

# Refused: a loop's back edge lands 2 bytes after the site.
        .globl patch_loop, patch_loop_end
        .type patch_loop, @function
patch_loop:
        xor %eax, %eax                  # 2 bytes
2:      add $1, %eax                    # 3 bytes: a branch target inside the displaced bytes
        cmp %edi, %eax
        jl 2b
        ret
patch_loop_end:
        .size patch_loop, patch_loop_end - patch_loop

# Refused: the 5 bytes would run past a ret into code reached only from elsewhere.
        .globl patch_short, patch_short_end
        .type patch_short, @function
patch_short:
        xor %eax, %eax                  # 2 bytes
        ret                             # 1 byte
        mov $3, %eax
        ret
patch_short_end:
        .size patch_short, patch_short_end - patch_short

# Refused: fewer than 5 bytes remain in the function.
        .globl patch_tiny, patch_tiny_end
        .type patch_tiny, @function
patch_tiny:
        xor %eax, %eax
        ret
patch_tiny_end:
        .size patch_tiny, patch_tiny_end - patch_tiny

# Refused: an indirect call displaced (its return address would be the trampoline's).
        .globl patch_indirect_call, patch_indirect_call_end
        .type patch_indirect_call, @function
patch_indirect_call:
        push %rbx                       # 1 byte
        call *%rdi                      # 2 bytes
        pop %rbx                        # 1 byte
        ret
        nop; nop; nop; nop
patch_indirect_call_end:
        .size patch_indirect_call, patch_indirect_call_end - patch_indirect_call

# Refused: a computed jump (a switch table) could land anywhere in the displaced bytes.
        .globl patch_switch, patch_switch_end
        .type patch_switch, @function
patch_switch:
        mov %edi, %eax                  # 2 bytes
        add $1, %eax                    # 3 bytes
        jmp *%rsi
        ret
patch_switch_end:
        .size patch_switch, patch_switch_end - patch_switch

# Refused: a loop instruction cannot be moved.
        .globl patch_loopinsn, patch_loopinsn_end
        .type patch_loopinsn, @function
patch_loopinsn:
        mov %edi, %ecx                  # 2 bytes
        loop 3f                         # 2 bytes (target outside the displaced bytes)
        nop                             # 1 byte
3:      ret
patch_loopinsn_end:
        .size patch_loopinsn, patch_loopinsn_end - patch_loopinsn

# Refused only when its split-off part is known: patch_hot.cold jumps back 2 bytes past the site.
        .globl patch_hot, patch_hot_end, patch_hot_cold, patch_hot_cold_end
        .type patch_hot, @function
patch_hot:
        xor %eax, %eax                  # 2 bytes
patch_hot_resume:
        add $1, %eax                    # 3 bytes
        ret
patch_hot_end:
        .size patch_hot, patch_hot_end - patch_hot
        .type patch_hot.cold, @function
patch_hot.cold:
patch_hot_cold:
        jmp patch_hot_resume
patch_hot_cold_end:
        .size patch_hot.cold, patch_hot_cold_end - patch_hot.cold

        .data
        .p2align 3
        .globl patch_value
patch_value:
        .quad 40

        .section .note.GNU-stack,"",@progbits
