; GEPs by negative constants of every index width (i8, i16, i32, i64), in instructions and
; in constant expressions; prints the sum of what they read.
@table = global [8 x i8] c"\01\02\03\04\05\06\07\08"
@end = global ptr getelementptr (i8, ptr @table, i64 8)
@fmt = private constant [4 x i8] c"%d\0A\00"
@last = global ptr getelementptr (i8, ptr getelementptr (i8, ptr @table, i64 8), i32 -1)

define i32 @main() {
entry:
  %e = load ptr, ptr @end
  %a = getelementptr i8, ptr %e, i8 -1
  %b = getelementptr i8, ptr %e, i16 -2
  %c = getelementptr i8, ptr %e, i32 -3
  %d = getelementptr i8, ptr %e, i64 -4
  %w = getelementptr i16, ptr %e, i8 -4
  %l = load ptr, ptr @last
  %va = load i8, ptr %a
  %vb = load i8, ptr %b
  %vc = load i8, ptr %c
  %vd = load i8, ptr %d
  %vw = load i16, ptr %w
  %vl = load i8, ptr %l
  %x1 = zext i8 %va to i32
  %x2 = zext i8 %vb to i32
  %x3 = zext i8 %vc to i32
  %x4 = zext i8 %vd to i32
  %x5 = zext i16 %vw to i32
  %x6 = zext i8 %vl to i32
  %s1 = mul i32 %x1, 1000
  %s2 = mul i32 %x2, 100
  %s3 = mul i32 %x3, 10
  %t1 = add i32 %s1, %s2
  %t2 = add i32 %t1, %s3
  %t3 = add i32 %t2, %x4
  %t4 = add i32 %t3, %x5
  %t5 = add i32 %t4, %x6
  %printed = call i32 (ptr, ...) @printf(ptr @fmt, i32 %t5)
  ret i32 0
}

declare i32 @printf(ptr, ...)
